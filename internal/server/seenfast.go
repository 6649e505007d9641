package server

import (
	"bytes"
	"unicode/utf8"
	"unsafe"

	"github.com/gin-gonic/gin"

	"github.com/simdex/simdex/fingerprint"
)

// Reflection-free decoders for the seen routes' read requests (check and
// filter, single user and batch), the shapes feed servers send hundreds of
// times a second with up to 1,000 ids each. Like fastCheckRequest they
// accept only the common shape: one JSON object with exactly the field
// names of the API (no case variants), each at most once, string values
// with at most the one-character escapes, booleans, small integers, no
// nulls. They report false, leaving the request in an unspecified state,
// for anything else, valid or not; the caller then decodes with
// decodeBytes, which defines what the API accepts and every error message.
// So these paths never reject a request, and what they accept they decode
// exactly as decodeBytes would (FuzzSeenFastDecode checks that against
// encoding/json).
//
// Why: encoding/json decoded the 500 ids of a filter through reflection,
// scanning the body twice and allocating one string per id: about half of
// the handler's CPU (benchmarks/2026-11-23-seen.md). Here the body is converted
// to one string once and every id without escapes is a substring of it,
// so decoding allocates a handful of slices however many ids there are.

// seenParser is a fastParser whose strings alias one copy of the body.
type seenParser struct {
	fastParser
	s string // string(body): ids are substrings of it (one allocation)
	// hint is the capacity of the first id or candidate list (an upper
	// bound on its length for a single-user body; 0: grow by append).
	hint int
	// ids, when its capacity covers hint, backs the first id list (a
	// pooled buffer of the single-user filter handler).
	ids []string
}

func newSeenParser(body []byte, single bool) (seenParser, bool) {
	return newSeenParserOn(body, single, string(body))
}

// newSeenParserOn is newSeenParser whose strings are substrings of s, which
// holds exactly body's bytes.
func newSeenParserOn(body []byte, single bool, s string) (seenParser, bool) {
	if !utf8.Valid(body) {
		return seenParser{}, false
	}
	p := seenParser{fastParser: fastParser{b: body}, s: s}
	if single {
		// Each element but the last is followed by a comma: an upper
		// bound on the length of the one list, found at memory speed.
		p.hint = bytes.Count(body, []byte{','}) + 1
	}
	return p, true
}

// aliasStr reads a string value: a substring of p.s when it holds no
// escape, else a copy with the escapes decoded (fastParser.str).
func (p *seenParser) aliasStr() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	for j := plainRun(p.b, start); j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.s[start:j], true
		case c == '\\':
			return p.str() // p.i is still on the opening quote
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// open reads the opening bracket c ('[' or '{') of an array or object:
// more is false for an empty one (its closing bracket read too).
func (p *seenParser) open(c byte) (more, ok bool) {
	if !p.byte(c) {
		return false, false
	}
	p.ws()
	if p.byte(c + 2) { // ']' is '[' + 2, '}' is '{' + 2
		return false, true
	}
	p.ws()
	return true, true
}

// next reads what follows an element: a comma (more) or the closing
// bracket c.
func (p *seenParser) next(c byte) (more, ok bool) {
	p.ws()
	if p.byte(',') {
		p.ws()
		return true, true
	}
	return false, p.byte(c)
}

// key reads an object key and its colon; the key aliases the body
// (compare, never keep); keys with escapes are declined.
func (p *seenParser) key() ([]byte, bool) {
	k, ok := p.rawKey()
	if !ok {
		return nil, false
	}
	p.ws()
	if !p.byte(':') {
		return nil, false
	}
	p.ws()
	return k, true
}

func (p *seenParser) strList() ([]string, bool) {
	var out []string
	if p.ids != nil && cap(p.ids) >= p.hint {
		out = p.ids[:0]
	} else {
		out = make([]string, 0, p.hint) // [] is an empty list, not nil, as for encoding/json
	}
	p.hint, p.ids = 0, nil
	more, ok := p.open('[')
	for ; ok && more; more, ok = p.next(']') {
		var s string
		if s, ok = p.aliasStr(); !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, ok
}

func (p *seenParser) boolean() (bool, bool) {
	switch {
	case bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return true, true
	case bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return false, true
	}
	return false, false
}

// fingerprint reads a fingerprint string as optFingerprint.UnmarshalText
// does; one it refuses is left to the general path (and its error).
func (p *seenParser) fingerprint() (optFingerprint, bool) {
	s, ok := p.aliasStr()
	if !ok {
		return optFingerprint{}, false
	}
	fp, set, err := parseFingerprintInput(s)
	return optFingerprint{FP: fp, Set: set}, err == nil
}

// hex16 parses the common form of a fingerprint, exactly 16 hex digits,
// without parseFingerprintInput's pattern match: a filter's 500
// candidates may each carry one.
func hex16(s string) (fingerprint.Fingerprint, bool) {
	if len(s) != 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < 16; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return fingerprint.Fingerprint(v), true
}

func (p *seenParser) candidates() ([]seenItem, bool) {
	out := make([]seenItem, 0, p.hint)
	p.hint = 0
	more, ok := p.open('[')
	for ; ok && more; more, ok = p.next(']') {
		out = append(out, seenItem{})
		if !p.candidate(&out[len(out)-1]) {
			return nil, false
		}
	}
	return out, ok
}

func (p *seenParser) candidate(it *seenItem) bool {
	return p.fields(func(key []byte) (bit uint8, ok bool) {
		switch string(key) { // no allocation for a switch on a converted slice
		case "id":
			it.ID, ok = p.aliasStr()
			return 1, ok
		case "doc_id":
			it.DocID, ok = p.aliasStr()
			return 2, ok
		case "fingerprint":
			it.Fingerprint, ok = p.fingerprint()
			return 4, ok
		}
		return 0, false
	})
}

// fields reads an object, calling value for each key with p.i on the
// value: value returns the key's bit (0: not a field of this shape) and
// whether it read the value. A key seen twice is declined. value must not
// keep the key (it aliases the body).
func (p *seenParser) fields(value func(key []byte) (bit uint8, ok bool)) bool {
	var have uint8
	more, ok := p.open('{')
	for ; ok && more; more, ok = p.next('}') {
		key, ok := p.key()
		if !ok {
			return false
		}
		bit, ok := value(key)
		if !ok || bit == 0 || have&bit != 0 {
			return false
		}
		have |= bit
	}
	return ok
}

// filterFields decodes one user's filter object into r; with user != nil
// (the batch form) it also takes the "user" field.
func (p *seenParser) filterFields(r *seenFilterRequest, user *string) bool {
	return p.fields(func(key []byte) (bit uint8, ok bool) {
		switch string(key) {
		case "candidates":
			r.Candidates, ok = p.candidates()
			return 1, ok
		case "ids":
			r.IDs, ok = p.strList()
			return 2, ok
		case "near":
			r.Near, ok = p.boolean()
			return 4, ok
		case "k":
			var k int
			k, ok = p.smallInt()
			r.K = &k
			return 8, ok
		case "answer":
			r.Answer, ok = p.aliasStr()
			return 32, ok
		}
		return p.userField(key, user, 16)
	})
}

// checkFields decodes one user's check object into r (see filterFields).
func (p *seenParser) checkFields(r *seenCheckRequest, user *string) bool {
	return p.fields(func(key []byte) (bit uint8, ok bool) {
		if string(key) == "ids" {
			r.IDs, ok = p.strList()
			return 1, ok
		}
		return p.userField(key, user, 2)
	})
}

// userField reads the batch forms' "user" field into *user (bit: its bit);
// anything else, or "user" in a single-user body (user nil), is declined.
func (p *seenParser) userField(key []byte, user *string, bit uint8) (uint8, bool) {
	if user == nil || string(key) != "user" {
		return 0, false
	}
	var ok bool
	*user, ok = p.aliasStr()
	return bit, ok
}

// fastSeenFilterAliased decodes POST /v1/users/{user}/seen/filter's body,
// an ids list into ids' memory when its capacity is enough, with strings
// that alias body's memory instead of a copy of it: the caller
// owns body and must not reuse it while any decoded string is reachable
// (the single-user handlers keep both in a filterScratch and clear the
// strings before the body's memory goes back to the pool). Why: the copy
// was over half of the bytes a filter request allocated.
func fastSeenFilterAliased(body []byte, req *seenFilterRequest, ids []string) bool {
	p, ok := newAliasedParser(body, ids)
	return ok && p.filterFields(req, nil) && p.end()
}

// fastSeenCheckAliased decodes POST /v1/users/{user}/seen/check's body as
// fastSeenFilterAliased decodes.
func fastSeenCheckAliased(body []byte, req *seenCheckRequest, ids []string) bool {
	p, ok := newAliasedParser(body, ids)
	return ok && p.checkFields(req, nil) && p.end()
}

// newAliasedParser is a single-user body's parser whose strings alias body
// and whose first id list goes into ids' memory, at the first field.
func newAliasedParser(body []byte, ids []string) (seenParser, bool) {
	p, ok := newSeenParserOn(body, true, unsafe.String(unsafe.SliceData(body), len(body)))
	if !ok {
		return p, false
	}
	p.ids = ids
	p.ws()
	return p, true
}

// users reads the batch bodies' {"users": [...]} up to the first element:
// present is false for {} (no list), more false for an empty list.
func (p *seenParser) users() (present, more, ok bool) {
	p.ws()
	if more, ok = p.open('{'); !ok || !more {
		return false, false, ok
	}
	key, ok := p.key()
	if !ok || string(key) != "users" {
		return false, false, false
	}
	more, ok = p.open('[')
	return true, more, ok
}

// usersEnd reads what follows the batch list: the object's end (a second
// "users" is declined) and nothing else.
func (p *seenParser) usersEnd() bool {
	p.ws()
	return p.byte('}') && p.end()
}

// fastSeenFilterBatch decodes POST /v1/seen/filter's body.
func fastSeenFilterBatch(body []byte, req *seenFilterBatchRequest) bool {
	return fastBatch(body, &req.Users, func(p *seenParser, u *seenFilterBatchUser) bool {
		return p.filterFields(&u.seenFilterRequest, &u.User)
	})
}

// fastSeenCheckBatch decodes POST /v1/seen/check's body.
func fastSeenCheckBatch(body []byte, req *seenCheckBatchRequest) bool {
	return fastBatch(body, &req.Users, func(p *seenParser, u *seenCheckBatchUser) bool {
		return p.checkFields(&u.seenCheckRequest, &u.User)
	})
}

// fastBatch decodes a batch body, {"users": [...]}, into *users, each
// element's object with elem.
func fastBatch[U any](body []byte, users *[]U, elem func(*seenParser, *U) bool) bool {
	p, ok := newSeenParser(body, false)
	if !ok {
		return false
	}
	present, more, ok := p.users()
	if !ok {
		return false
	}
	if !present {
		return p.end()
	}
	*users = make([]U, 0, 4) // [] is an empty list, not nil
	for ; ok && more; more, ok = p.next(']') {
		var zero U
		*users = append(*users, zero)
		if !elem(&p, &(*users)[len(*users)-1]) {
			return false
		}
	}
	return ok && p.usersEnd()
}

// decodeFast decodes the body into req with fast, falling back to the
// strict decoder (decodeBytes, which owns every error) when fast declines.
func decodeFast[T any](c *gin.Context, req *T, fast func([]byte, *T) bool) error {
	return withBody(c, func(body []byte) error {
		if fast(body, req) {
			return nil
		}
		var zero T
		*req = zero
		return decodeBytes(body, req)
	})
}
