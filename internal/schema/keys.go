package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AmbiguousKeys looks for object members in data whose key repeats an earlier key
// of the same object, or equals one under Unicode case folding (strings.EqualFold).
// Such a document means one thing to the validator, which matches keys exactly and
// keeps the last of repeated keys, and another to encoding/json, which matches
// struct fields case-insensitively and applies every occurrence in turn; refusing
// it keeps "validated" and "decoded" the same value.
//
// It returns the first MaxViolations such members, each placed at the JSON Pointer
// of the object concerned, and how many there are in all. It reads data once as a
// stream of tokens, through nested objects and arrays, in time linear in its size.
// Data that is not JSON yields what was found before the error: reporting syntax
// is Validate's parser's job.
func AmbiguousKeys(data []byte) ([]Violation, int) {
	if distinctKeys(data) {
		return nil, 0
	}
	vs, total, _ := scanKeys(data, 0, MaxViolations)
	return vs, total
}

// maxDistinctDepth is how deeply distinctKeys follows nested values; a deeper
// document is scanned.
const maxDistinctDepth = 64

// distinctKeys reports whether data is one JSON value none of whose objects
// repeats a key or holds two that differ only in case, when that is quick to
// tell: keys without escapes, at most maxScanKeys to an object, compared with
// each other as strings.EqualFold does. It reads data once and allocates
// nothing. False means "scan it", not "ambiguous".
func distinctKeys(data []byte) bool {
	p := cleanParser{data: data}
	p.space()
	if !p.distinct(0) {
		return false
	}
	p.space()
	return p.i == len(data)
}

// distinct moves past the value at p.i, inside depth open objects and arrays,
// and reports whether its objects' keys are distinct as distinctKeys tells.
func (p *cleanParser) distinct(depth int) bool {
	if p.i >= len(p.data) || depth >= maxDistinctDepth {
		return false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		p.i++
		var keys [maxScanKeys][]byte
		n := 0
		p.space()
		if p.i < len(p.data) && p.data[p.i] == '}' {
			p.i++
			return true
		}
		for {
			if _, ok := p.distinctKey(&keys, &n); !ok || !p.distinct(depth+1) {
				return false
			}
			if ended, ok := p.next('}'); !ok || ended {
				return ok
			}
		}
	case c == '[':
		p.i++
		p.space()
		if p.i < len(p.data) && p.data[p.i] == ']' {
			p.i++
			return true
		}
		for {
			if !p.distinct(depth + 1) {
				return false
			}
			if ended, ok := p.next(']'); !ok || ended {
				return ok
			}
		}
	case c == '"':
		return p.skipString()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.skipNumber()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return false
}

// skipString moves past the string at p.i, escapes and all, reporting false
// for one that is cut short or holds a control character.
func (p *cleanParser) skipString() bool {
	for i := p.i + 1; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			p.i = i + 1
			return true
		case c == '\\':
			i++
		case c < 0x20:
			return false
		}
	}
	return false
}

// scanKeys is AmbiguousKeys describing at most limit violations. With maxDepth
// above zero it also checks what Validate needs before the schema applies: data
// nested deeper, or holding more than MaxValues values, is one more violation,
// and the scan stops there; every number
// the validator could not check cheaply (see checkable) is one more.
// The last result reports whether data was read to its end without a syntax error.
func scanKeys(data []byte, maxDepth, limit int) ([]Violation, int, bool) {
	// level is one open object or array; key and index say where in it we are.
	type level struct {
		object bool
		keys   map[string]string // folded key -> the key as first sent
		key    string            // member being read, when want is false
		want   bool              // next token in an object is a key or '}'
		index  int               // element being read in an array
	}
	var (
		stack  []level
		out    []Violation
		total  int
		values int
	)
	// at is the JSON Pointer of the innermost open object or array (or, with
	// value set, of the value being read in it); it is built only for the
	// violations described.
	at := func(value bool) string {
		levels := stack
		if !value && len(levels) > 0 {
			levels = levels[:len(levels)-1]
		}
		tokens := make([]string, 0, len(levels))
		for _, l := range levels {
			if l.object {
				tokens = append(tokens, l.key)
			} else {
				tokens = append(tokens, strconv.Itoa(l.index))
			}
		}
		return clip(pointer(tokens))
	}
	reportAt := func(value bool, message func() string) {
		total++
		if len(out) < limit {
			out = append(out, Violation{Path: at(value), Message: clip(message())})
		}
	}
	report := func(message func() string) { reportAt(false, message) }
	// valueDone moves the innermost level past the value just read.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if l := &stack[len(stack)-1]; l.object {
			l.want = true
		} else {
			l.index++
		}
	}
	open := func(l level) bool {
		stack = append(stack, l)
		if maxDepth > 0 && len(stack) > maxDepth {
			report(func() string {
				return fmt.Sprintf("the value is nested more than %d levels deep; send a flatter value", maxDepth)
			})
			return false
		}
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are not parsed, so none can fail here
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, total, true
		}
		if err != nil {
			return out, total, false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].want {
			l := &stack[n-1]
			key, ok := tok.(string)
			if !ok { // '}'
				stack = stack[:n-1]
				valueDone()
				continue
			}
			if l.keys == nil {
				l.keys = make(map[string]string)
			}
			fold := foldKey(key)
			if first, seen := l.keys[fold]; !seen {
				l.keys[fold] = key
			} else if first == key {
				report(func() string { return fmt.Sprintf("key %q appears twice; send it once", key) })
			} else {
				report(func() string {
					return fmt.Sprintf("key %q differs from key %q only in case; send one of them", key, first)
				})
			}
			l.key, l.want = key, false
			continue
		}
		if d, ok := tok.(json.Delim); maxDepth > 0 && (!ok || d == '{' || d == '[') {
			// Reported once, at the value that exceeds the limit; the scan goes
			// on, so that the keys are still counted.
			if values++; values == MaxValues+1 {
				reportAt(true, func() string {
					return fmt.Sprintf("the document holds more than %d values; send a smaller one", MaxValues)
				})
			}
		}
		if num, ok := tok.(json.Number); ok && maxDepth > 0 && !checkable(string(num)) {
			reportAt(true, func() string {
				return fmt.Sprintf("the number %s is too long or too large to check; send at most %d characters with an exponent between -%d and %d", num, maxNumberLength, maxExponent, maxExponent)
			})
		}
		switch tok {
		case json.Delim('{'):
			if !open(level{object: true, want: true}) {
				return out, total, true
			}
		case json.Delim('['):
			if !open(level{}) {
				return out, total, true
			}
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// Numbers are checked against a schema as exact rationals, whose cost grows with
// the number's digits and with its exponent: 1e999999 takes a fraction of a second
// to test against "multipleOf" or "integer". Numbers are refused beyond these
// limits, which no float64 or int64 comes near.
const (
	maxNumberLength = 100
	maxExponent     = 400
)

// checkable reports whether the JSON number n is short enough and has an
// exponent small enough to be validated cheaply.
func checkable(n string) bool {
	if len(n) > maxNumberLength {
		return false
	}
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return true
	}
	exp := strings.TrimLeft(n[i+1:], "+-")
	exp = strings.TrimLeft(exp, "0")
	if len(exp) > 3 {
		return false
	}
	v, err := strconv.Atoi("0" + exp)
	return err == nil && v <= maxExponent
}

// foldKey maps s to a form that two strings share exactly when strings.EqualFold
// reports them equal: every rune becomes the smallest rune of its simple case
// folding orbit (so "K", "k" and the Kelvin sign all become "K"). It lets
// AmbiguousKeys find a case-folded twin with one map lookup per key.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
