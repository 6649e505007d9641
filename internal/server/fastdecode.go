package server

import (
	"unicode/utf8"
)

// fastCheckRequest decodes the common shape of a check request without
// reflection: one JSON object whose keys are exactly "title", "text",
// "lang", "fingerprint", "source", "k" or "limit", each at most once, with string
// values (escapes other than \u allowed) and small integers. It reports
// false, leaving req in an unspecified state, for anything else, valid or
// not; the caller then decodes with decodeBytes, which is the definition of
// what the API accepts and of every error message. So this path never
// rejects a request, and what it accepts it decodes exactly as decodeBytes
// would (FuzzFastCheckRequest checks that against encoding/json).
//
// Why: encoding/json scans a body twice (once to find the value's end,
// once to decode) through reflection, ~8% of a check's CPU by fingerprint
// and more for a 1 KB text.
func fastCheckRequest(body []byte, req *checkRequest) bool {
	if !utf8.Valid(body) {
		return false
	}
	p := fastParser{b: body}
	p.ws()
	if !p.byte('{') {
		return false
	}
	var seen uint8
	p.ws()
	if p.byte('}') {
		return p.end()
	}
	for {
		p.ws()
		key, ok := p.rawKey()
		if !ok {
			return false
		}
		p.ws()
		if !p.byte(':') {
			return false
		}
		p.ws()
		var bit uint8
		switch string(key) { // no allocation for a switch on a converted slice
		case "title":
			bit = 1
			req.Title, ok = p.str()
		case "text":
			bit = 2
			req.Text, ok = p.str()
		case "lang":
			bit = 4
			req.Lang, ok = p.str()
		case "fingerprint":
			bit = 8
			req.Fingerprint, ok = p.str()
		case "k":
			bit = 16
			var v int
			v, ok = p.smallInt()
			req.K = &v
		case "limit":
			bit = 32
			var v int
			v, ok = p.smallInt()
			req.Limit = &v
		case "source":
			bit = 64
			req.Source, ok = p.str()
		default:
			return false // unknown fields, case variants, since/until: the general path
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		p.ws()
		if p.byte(',') {
			continue
		}
		if p.byte('}') {
			return p.end()
		}
		return false
	}
}

// fastParser walks a JSON body; every method reports false for anything it
// does not handle.
type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end: only whitespace may follow the object.
func (p *fastParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// rawKey reads a key without escapes; the result aliases the body (only
// compared, never kept).
func (p *fastParser) rawKey() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			k := p.b[start:p.i]
			p.i++
			return k, true
		}
		if c == '\\' || c < 0x20 {
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// str reads a string value (a copy), decoding the single-character escapes.
func (p *fastParser) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) { // the common case: no escapes, one copy
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		}
		if c < 0x20 {
			return "", false
		}
		if c == '\\' {
			break
		}
		p.i++
	}
	out := make([]byte, 0, len(p.b)-start)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			var r byte
			switch p.b[p.i+1] {
			case '"':
				r = '"'
			case '\\':
				r = '\\'
			case '/':
				r = '/'
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default: // \u and invalid escapes: the general path
				return "", false
			}
			out = append(out, r)
			p.i += 2
		default: // copy the run up to the next quote, escape or control byte
			j := p.i + 1
			for j < len(p.b) && p.b[j] != '"' && p.b[j] != '\\' && p.b[j] >= 0x20 {
				j++
			}
			out = append(out, p.b[p.i:j]...)
			p.i = j
		}
	}
	return "", false
}

// smallInt reads -?(0|[1-9][0-9]{0,8}) not followed by a fraction or
// exponent.
func (p *fastParser) smallInt() (int, bool) {
	neg := p.byte('-')
	start := p.i
	v := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		v = v*10 + int(p.b[p.i]-'0')
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 9 || (n > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}
