package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// shape is a schema of the plainest and most common kind, such as the input
// schemas tool.Func derives: an object whose properties are each a string, a
// number, an integer or a boolean, some of them required, others perhaps refused
// (additionalProperties false), numbers perhaps bounded by "minimum" and
// "maximum". A document such a schema clearly accepts is
// accepted without the general validator; any other document, including every
// one it refuses, goes to the general validator, which describes what is wrong.
type shape struct {
	props    map[string]string // property name to its type
	bounds   map[string]bounds // a number's or integer's minimum and maximum
	required []string
	closed   bool // additionalProperties is false
}

// bounds are a property's "minimum" and "maximum", each exactly a float64.
type bounds struct {
	min, max       float64
	hasMin, hasMax bool
}

// exactBound reads a bound that a float64 holds exactly, so that comparing a
// number's float64 with it strictly is exact (see inside).
func exactBound(raw json.RawMessage) (float64, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	r, ok := new(big.Rat).SetString(string(n))
	if err != nil || !ok || math.IsInf(f, 0) {
		return 0, false
	}
	return f, r.Cmp(new(big.Rat).SetFloat64(f)) == 0
}

// inside reports whether the JSON number n lies strictly between the bounds.
// The number's nearest float64 lying strictly inside bounds a float64 holds
// exactly puts the number itself strictly inside; a number on or near a bound
// is left to the general validator.
func (b bounds) inside(n json.Number) bool {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return false
	}
	return (!b.hasMin || f > b.min) && (!b.hasMax || f < b.max)
}

// shapeOf returns the shape of a schema document, or nil if the document uses
// anything beyond the plain object schema shape describes (annotations aside).
func shapeOf(raw []byte) *shape {
	var doc map[string]json.RawMessage
	if json.Unmarshal(raw, &doc) != nil || scanDuplicate(raw) {
		return nil
	}
	sh := &shape{props: map[string]string{}}
	typed := false
	for k, v := range doc {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil
			}
			typed = true
		case "properties":
			var ps map[string]map[string]json.RawMessage
			if json.Unmarshal(v, &ps) != nil {
				return nil
			}
			for name, p := range ps {
				for pk, pv := range p {
					switch pk {
					case "type":
						var t string
						if json.Unmarshal(pv, &t) != nil {
							return nil
						}
						switch t {
						case "string", "number", "integer", "boolean":
							sh.props[name] = t
						default:
							return nil
						}
					case "minimum", "maximum":
						f, ok := exactBound(pv)
						if !ok {
							return nil
						}
						if sh.bounds == nil {
							sh.bounds = map[string]bounds{}
						}
						b := sh.bounds[name]
						if pk == "minimum" {
							b.min, b.hasMin = f, true
						} else {
							b.max, b.hasMax = f, true
						}
						sh.bounds[name] = b
					case "description", "title":
					default:
						return nil
					}
				}
				if _, ok := sh.bounds[name]; ok && sh.props[name] != "number" && sh.props[name] != "integer" {
					return nil
				}
				if sh.props[name] == "" {
					return nil
				}
			}
		case "required":
			if json.Unmarshal(v, &sh.required) != nil {
				return nil
			}
		case "additionalProperties":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil
			}
			sh.closed = !b
		case "description", "title":
		default:
			return nil
		}
	}
	if !typed {
		return nil
	}
	return sh
}

// scanDuplicate reports whether the document repeats a key anywhere, which
// would let decoders disagree about what it says.
func scanDuplicate(raw []byte) bool {
	_, total, ok := scanKeys(raw, MaxDepth, 1)
	return !ok || total > 0
}

// accepts reports whether doc (as jsonschema.UnmarshalJSON decodes it) clearly
// matches the shape. False means "ask the general validator", not "invalid".
func (sh *shape) accepts(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		t, ok := sh.props[k]
		if !ok {
			if sh.closed {
				return false
			}
			continue
		}
		switch t {
		case "string":
			_, ok = v.(string)
		case "boolean":
			_, ok = v.(bool)
		case "number":
			var n json.Number
			n, ok = v.(json.Number)
			if b, bounded := sh.bounds[k]; ok && bounded {
				ok = b.inside(n)
			}
		case "integer":
			var n json.Number
			n, ok = v.(json.Number)
			ok = ok && !strings.ContainsAny(string(n), ".eE")
			if b, bounded := sh.bounds[k]; ok && bounded {
				ok = b.inside(n)
			}
		}
		if !ok {
			return false
		}
	}
	for _, r := range sh.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	return true
}

// maxScanKeys is how many keys acceptsJSON compares case-insensitively with
// each other; an object with more goes the general way.
const maxScanKeys = 8

// acceptsJSON reports whether data is a JSON document that parseClean reads
// and accepts then accepts, reading data in place without building the
// document. It answers false whenever it is not sure (escaped strings,
// nested values, many keys), and the caller then takes the general way; so
// true is exactly parseClean's and accepts' true.
func (sh *shape) acceptsJSON(data []byte) bool {
	p := cleanParser{data: data}
	p.space()
	if p.i >= len(data) || data[p.i] != '{' {
		return false
	}
	p.i++
	var keys [maxScanKeys][]byte
	n := 0
	p.space()
	if p.i < len(data) && data[p.i] == '}' {
		p.i++
	} else {
		for {
			k, ok := p.distinctKey(&keys, &n)
			if !ok {
				return false
			}
			t, known := sh.props[string(k)]
			if !known && sh.closed {
				return false
			}
			if !p.scalar(t, sh.bounds, k) {
				return false
			}
			if ended, ok := p.next('}'); !ok {
				return false
			} else if ended {
				break
			}
		}
	}
	p.space()
	if p.i != len(data) {
		return false
	}
	for _, r := range sh.required {
		found := false
		for _, k := range keys[:n] {
			if string(k) == r {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// distinctKey reads an object's next key, a plain string (plainString), and
// the colon after it, and records it in keys[*n]. It reports false when keys
// is full or the key equals one there under case folding, as well as for a key
// that is not plain.
func (p *cleanParser) distinctKey(keys *[maxScanKeys][]byte, n *int) ([]byte, bool) {
	if *n == maxScanKeys {
		return nil, false
	}
	k, ok := p.plainString()
	if !ok {
		return nil, false
	}
	for _, o := range keys[:*n] {
		if bytes.EqualFold(o, k) {
			return nil, false
		}
	}
	keys[*n] = k
	*n++
	return k, p.colon()
}

// plainString reads a string without escapes, in valid UTF-8 and without
// control characters, and returns its contents; any other value reports false.
func (p *cleanParser) plainString() ([]byte, bool) {
	if p.i >= len(p.data) || p.data[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for i := start; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			s := p.data[start:i]
			if !utf8.Valid(s) {
				return nil, false
			}
			p.i = i + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// scalar reads the value of property key, which the shape types t ("" for a
// property it does not name), and reports whether accepts would take it: a
// value of type t, or for an unnamed property any plain string, checkable
// number, boolean or null. It reports false for anything else, nested values
// included.
func (p *cleanParser) scalar(t string, bs map[string]bounds, key []byte) bool {
	if p.i >= len(p.data) {
		return false
	}
	switch c := p.data[p.i]; {
	case c == '"':
		if t != "" && t != "string" {
			return false
		}
		_, ok := p.plainString()
		return ok
	case c == 't' || c == 'f' || c == 'n':
		if t != "" && (t != "boolean" || c == 'n') {
			return false
		}
		word := "null"
		switch c {
		case 't':
			word = "true"
		case 'f':
			word = "false"
		}
		return p.literal(word)
	case c == '-' || ('0' <= c && c <= '9'):
		if t != "" && t != "number" && t != "integer" {
			return false
		}
		start := p.i
		if !p.skipNumber() || !checkable(string(p.data[start:p.i])) {
			return false
		}
		if t == "" {
			return true
		}
		num := p.data[start:p.i]
		if t == "integer" && bytes.ContainsAny(num, ".eE") {
			return false
		}
		if b, bounded := bs[string(key)]; bounded {
			return b.inside(json.Number(num))
		}
		return true
	}
	return false
}
