package schema

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// parseClean decodes data in one pass into the value jsonschema.UnmarshalJSON
// gives, when data passes every check scanKeys makes (no repeated keys, depth,
// size, checkable numbers); otherwise it reports false and Validate takes the
// slower path that reads data twice and says what is wrong.
func parseClean(data []byte) (any, bool) {
	p := cleanParser{data: data}
	p.space()
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.data)
}

// cleanParser is parseClean's state: the document and the read position, and
// how many values it has read so far.
type cleanParser struct {
	data   []byte
	i      int
	values int
}

func (p *cleanParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads the value at p.i, inside depth open objects and arrays.
func (p *cleanParser) value(depth int) (any, bool) {
	if p.i >= len(p.data) {
		return nil, false
	}
	if p.values++; p.values > MaxValues {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *cleanParser) literal(s string) bool {
	if !strings.HasPrefix(string(p.data[p.i:min(len(p.data), p.i+len(s))]), s) {
		return false
	}
	p.i += len(s)
	return true
}

func (p *cleanParser) object(depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	p.i++ // '{'
	m := map[string]any{}
	// The first keys are compared by strings.EqualFold; past a few, by their
	// folded forms in a map (foldKey), so that a large object costs linear time.
	var few [8]string
	n := 0
	var folded map[string]struct{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		key := k.(string)
		if n < len(few) {
			for _, o := range few[:n] {
				if strings.EqualFold(o, key) {
					return nil, false
				}
			}
			few[n] = key
		} else {
			if folded == nil {
				folded = make(map[string]struct{}, 2*len(few))
				for _, o := range few {
					folded[foldKey(o)] = struct{}{}
				}
			}
			f := foldKey(key)
			if _, dup := folded[f]; dup {
				return nil, false
			}
			folded[f] = struct{}{}
		}
		n++
		if !p.colon() {
			return nil, false
		}
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		m[key] = v
		if ended, ok := p.next('}'); !ok {
			return nil, false
		} else if ended {
			return m, true
		}
	}
}

// colon moves past the colon after an object's key, and the space around it.
func (p *cleanParser) colon() bool {
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != ':' {
		return false
	}
	p.i++
	p.space()
	return true
}

// next moves past what follows a member of an object or an array: a comma and
// the space after it, or end, the closing bracket. It reports whether the
// value ended there, and false for ok when neither follows.
func (p *cleanParser) next(end byte) (ended, ok bool) {
	p.space()
	if p.i >= len(p.data) {
		return false, false
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		p.space()
		return false, true
	case end:
		p.i++
		return true, true
	}
	return false, false
}

func (p *cleanParser) array(depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	p.i++ // '['
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if ended, ok := p.next(']'); !ok {
			return nil, false
		} else if ended {
			return a, true
		}
	}
}

// str reads a string. One without escapes and in valid UTF-8 is its bytes; any
// other is decoded by encoding/json, so that escapes and invalid bytes come out
// as the validator's decoder has them.
func (p *cleanParser) str() (any, bool) {
	start := p.i
	p.i++ // '"'
	plain := true
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			lit := p.data[start:p.i]
			if plain && utf8.Valid(lit) {
				return string(lit[1 : len(lit)-1]), true
			}
			var s string
			if json.Unmarshal(lit, &s) != nil {
				return nil, false
			}
			return s, true
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return nil, false
		default:
			p.i++
		}
	}
	return nil, false
}

// number reads a number as JSON's grammar has it, kept as its text.
func (p *cleanParser) number() (any, bool) {
	start := p.i
	if !p.skipNumber() {
		return nil, false
	}
	n := string(p.data[start:p.i])
	if !checkable(n) {
		return nil, false
	}
	return json.Number(n), true
}

// skipNumber moves past a number as JSON's grammar has it, reporting false if
// there is none at p.i.
func (p *cleanParser) skipNumber() bool {
	d := p.data
	digits := func() bool {
		s := p.i
		for p.i < len(d) && '0' <= d[p.i] && d[p.i] <= '9' {
			p.i++
		}
		return p.i > s
	}
	if d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case !digits():
		return false
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if !digits() {
			return false
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if !digits() {
			return false
		}
	}
	return true
}
