package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AmbiguousKeys returns one violation for every object member in data whose key
// repeats an earlier key of the same object, or equals one under Unicode case
// folding (strings.EqualFold). Such a document means one thing to the validator,
// which matches keys exactly and keeps the last of repeated keys, and another to
// encoding/json, which matches struct fields case-insensitively and applies every
// occurrence in turn; refusing it keeps "validated" and "decoded" the same value.
//
// It reads data once as a stream of tokens, through nested objects and arrays, and
// places each violation at the JSON Pointer of the object concerned. Data that is
// not JSON yields what was found before the error: reporting syntax is Validate's
// parser's job.
func AmbiguousKeys(data []byte) []Violation {
	// Every member of an object is followed by a colon, so a document with
	// fewer than two colons (such as {"approved": true}) has no two keys to
	// compare; colons inside strings only make the count larger.
	if bytes.Count(data, []byte{':'}) < 2 {
		return nil
	}
	// level is one open object or array; key and index say where in it we are.
	type level struct {
		object bool
		keys   map[string]string // folded key -> the key as first sent
		key    string            // member being read, when wantKey is false
		want   bool              // next token in an object is a key or '}'
		index  int               // element being read in an array
	}
	var (
		stack []*level
		out   []Violation
	)
	// here is the JSON Pointer of the innermost open object or array.
	here := func() string {
		tokens := make([]string, 0, len(stack))
		for _, l := range stack[:len(stack)-1] {
			if l.object {
				tokens = append(tokens, l.key)
			} else {
				tokens = append(tokens, strconv.Itoa(l.index))
			}
		}
		return pointer(tokens)
	}
	// valueDone moves the innermost level past the value just read.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if l := stack[len(stack)-1]; l.object {
			l.want = true
		} else {
			l.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are not parsed, so none can fail here
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].want {
			l := stack[n-1]
			key, ok := tok.(string)
			if !ok { // '}'
				stack = stack[:n-1]
				valueDone()
				continue
			}
			fold := foldKey(key)
			if first, seen := l.keys[fold]; !seen {
				l.keys[fold] = key
			} else if first == key {
				out = append(out, Violation{Path: here(), Message: fmt.Sprintf("key %q appears twice; send it once", key)})
			} else {
				out = append(out, Violation{Path: here(), Message: fmt.Sprintf("key %q differs from key %q only in case; send one of them", key, first)})
			}
			l.key, l.want = key, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{object: true, keys: make(map[string]string), want: true})
		case json.Delim('['):
			stack = append(stack, &level{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
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
