package server

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

// Request bodies are decoded by encoding/json, which is more lenient than
// the API's request schemas (openapi.json): it matches keys without regard
// to case, takes null for any field, and names a field of the wrong JSON
// type only by its Go path. checkShape walks a body against the Go type it
// decodes into, before it is decoded, and reports the first difference
// from the schema with the JSON path of the field (items[3].fingerprint):
//
//   - a key that is not exactly the JSON name of a field: unknown-field;
//   - null (no request field is nullable): invalid-field;
//   - a value of the wrong JSON kind (a number for a string, 1.5 for an
//     integer): invalid-field;
//   - a string the field's type refuses: a fingerprint that is not one of
//     the forms of the FingerprintInput schema (bad-fingerprint), a time
//     that is not an RFC 3339 date-time of the Time schema (invalid-field).
//
// Malformed JSON is left to the decoder, whose error is the answer.

// Patterns of the request schemas, enforced by the server as written in
// openapi.json (TestOpenAPIPatterns compares them). They are RE2 and
// ECMA-262 alike.
const (
	// fingerprintPattern is the FingerprintInput schema: empty (no
	// fingerprint), 16 hex digits, 0x and 1 to 16 hex digits, or an
	// unsigned 64-bit decimal without leading zeros, optionally after
	// "d:" (a 16-digit number without it is read as hex).
	fingerprintPattern = `^(|[0-9a-fA-F]{16}|0[xX][0-9a-fA-F]{1,16}|(d:)?(` + uint64Decimal + `))$`
	uint64Decimal      = `0|[1-9][0-9]{0,18}|1[0-7][0-9]{18}|18[0-3][0-9]{17}|184[0-3][0-9]{16}|1844[0-5][0-9]{15}|` +
		`18446[0-6][0-9]{14}|184467[0-3][0-9]{13}|1844674[0-3][0-9]{12}|184467440[0-6][0-9]{10}|` +
		`1844674407[0-2][0-9]{9}|18446744073[0-6][0-9]{8}|1844674407370[0-8][0-9]{6}|` +
		`18446744073709[0-4][0-9]{5}|184467440737095[0-4][0-9]{4}|18446744073709550[0-9]{3}|` +
		`18446744073709551[0-5][0-9]{2}|1844674407370955160[0-9]|1844674407370955161[0-4]|18446744073709551615`

	// timePattern is the Time schema: an RFC 3339 date-time with an
	// upper-case T and Z, a date that exists (February 29 in leap years
	// only), no leap second, and a zone offset of -23:59..+23:59.
	timePattern = `^(` + `[0-9]{4}-` + monthDay + `|` + leapYear + `-02-29` + `)T` + clock + `$`
	monthDay    = `((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))`
	leapYear    = `([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)`
	clock       = `([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])`

	// documentTimePattern is the DocumentTime schema: a Time whose
	// written year is 1871..2168 (minDocYear..maxDocYear), so that in UTC
	// it lies within the years the index stores.
	documentTimePattern = `^(` + docYear + `-` + monthDay + `|` + docLeapYear + `-02-29` + `)T` + clock + `$`
	docYear             = `(187[1-9]|18[89][0-9]|19[0-9]{2}|20[0-9]{2}|21[0-5][0-9]|216[0-8])`
	docLeapYear         = `(18(7[26]|8[048]|9[26])|19(0[48]|[2468][048]|[13579][26])|20([02468][048]|[13579][26])|21(0[48]|1[26]|2[048]|3[26]|4[048]|5[26]|6[048]))`
	minDocYear          = 1871
	maxDocYear          = 2168
)

var (
	fingerprintRE = regexp.MustCompile(fingerprintPattern)
	timeRE        = regexp.MustCompile(timePattern)
)

// parseFingerprintInput reads a request's fingerprint: ok is false for ""
// (none); a string outside fingerprintPattern is an error wrapping
// fingerprint.ErrBadFingerprint.
func parseFingerprintInput(s string) (fp fingerprint.Fingerprint, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	if fp, ok := hex16(s); ok {
		return fp, true, nil
	}
	if !fingerprintRE.MatchString(s) {
		return 0, false, fmt.Errorf("%w: %q: want 16 hex digits, 0x and 1 to 16 hex digits, or an unsigned 64-bit decimal (d: prefix optional)", fingerprint.ErrBadFingerprint, s)
	}
	fp, err = fingerprint.Parse(s)
	return fp, err == nil, err
}

// badFingerprint is the problem of a request's bad fingerprint, on every
// route: kind bad-fingerprint, naming the field.
func badFingerprint(field string, err error) error {
	return &requestError{kind: "bad-fingerprint", field: field, detail: err.Error()}
}

// parseTime reads a request's time: timePattern, then encoding/json's
// RFC 3339 parse.
func parseTime(s string) (time.Time, error) {
	if !timeRE.MatchString(s) {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 date-time (2026-11-23T08:00:00Z; upper-case T and Z, offsets -23:59..+23:59)", s)
	}
	return time.Parse(time.RFC3339, s)
}

// pathSegmentID refuses the ids "." and "..": clients remove such
// segments from a URL's path before they send it.
func pathSegmentID(id string) error {
	if id == "." || id == ".." {
		return fmt.Errorf("%q cannot be a path segment", id)
	}
	return nil
}

// errMalformed: checkShape met malformed JSON; the decoder reports it.
var errMalformed = errors.New("server: malformed JSON")

// shapeKind is the JSON a field takes.
type shapeKind uint8

const (
	shapeAny    shapeKind = iota // anything (not used by request types today)
	shapeString                  // a string
	shapeInt                     // an integer: no fraction, no exponent
	shapeNumber                  // a number
	shapeBool                    // true or false
	shapeArray                   // an array of elem
	shapeMap                     // an object with any keys, values elem
	shapeStruct                  // an object with the keys of fields
	shapeParsed                  // a string that parse accepts
)

// shape is the JSON shape of a Go request type.
type shape struct {
	kind   shapeKind
	elem   *shape
	fields map[string]*shape
	parse  func(s string) error
	// fp: a fingerprint field, whose every fault is bad-fingerprint.
	fp bool
}

var (
	shapesMu sync.Mutex
	shapes   = map[reflect.Type]*shape{}

	timeType           = reflect.TypeFor[time.Time]()
	optFingerprintType = reflect.TypeFor[optFingerprint]()
	fingerprintType    = reflect.TypeFor[fingerprint.Fingerprint]()
	textUnmarshaler    = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler    = reflect.TypeFor[json.Unmarshaler]()
)

func shapeOf(t reflect.Type) *shape {
	shapesMu.Lock()
	defer shapesMu.Unlock()
	return shapeOfLocked(t)
}

func shapeOfLocked(t reflect.Type) *shape {
	if sh, ok := shapes[t]; ok {
		return sh
	}
	sh := &shape{}
	shapes[t] = sh // before the fields: a recursive type refers to itself
	switch {
	case t == timeType:
		sh.kind, sh.parse = shapeParsed, func(s string) error { _, err := parseTime(s); return err }
	case t == optFingerprintType:
		sh.kind, sh.parse = shapeParsed, func(s string) error { _, _, err := parseFingerprintInput(s); return err }
	case t == fingerprintType:
		sh.kind, sh.parse = shapeParsed, func(s string) error {
			if s == "" {
				return fmt.Errorf("%w: empty", fingerprint.ErrBadFingerprint)
			}
			_, _, err := parseFingerprintInput(s)
			return err
		}
	case reflect.PointerTo(t).Implements(jsonUnmarshaler), reflect.PointerTo(t).Implements(textUnmarshaler):
		sh.kind, sh.parse = shapeParsed, func(s string) error {
			b, _ := json.Marshal(s)
			return json.Unmarshal(b, reflect.New(t).Interface())
		}
	default:
		switch t.Kind() {
		case reflect.Pointer:
			*sh = *shapeOfLocked(t.Elem())
		case reflect.String:
			sh.kind = shapeString
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			sh.kind = shapeInt
		case reflect.Float32, reflect.Float64:
			sh.kind = shapeNumber
		case reflect.Bool:
			sh.kind = shapeBool
		case reflect.Slice, reflect.Array:
			sh.kind, sh.elem = shapeArray, shapeOfLocked(t.Elem())
		case reflect.Map:
			sh.kind, sh.elem = shapeMap, shapeOfLocked(t.Elem())
		case reflect.Struct:
			sh.kind, sh.fields = shapeStruct, map[string]*shape{}
			addFields(sh.fields, t)
		}
	}
	return sh
}

// addFields adds t's JSON fields to fields, those of embedded structs
// without a name of their own included, as encoding/json sees them.
func addFields(fields map[string]*shape, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(fields, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sh := shapeOfLocked(f.Type)
		if name == "fingerprint" {
			fsh := *sh
			fsh.fp = true
			sh = &fsh
		}
		fields[name] = sh
	}
}

// checkShape reports the first place where body differs from the JSON
// shape of v's type (see above), errMalformed for malformed JSON, or nil.
func checkShape(body []byte, v any) error {
	w := shapeWalker{b: body}
	return w.value(shapeOf(reflect.TypeOf(v)))
}

// shapeWalker walks a JSON body; path holds the keys (string) and
// indexes (int) down to the current value.
type shapeWalker struct {
	b    []byte
	i    int
	path []any
}

func (w *shapeWalker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// field is the JSON path of the current value: users[0].candidates[2].id.
func (w *shapeWalker) field() string {
	var sb strings.Builder
	for _, p := range w.path {
		switch p := p.(type) {
		case string:
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(p)
		case int:
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(p))
			sb.WriteByte(']')
		}
	}
	return sb.String()
}

func (w *shapeWalker) fail(kind, format string, args ...any) error {
	return &requestError{kind: kind, field: w.field(), detail: fmt.Sprintf(format, args...)}
}

var kindNames = [...]string{shapeAny: "value", shapeString: "a JSON string", shapeInt: "an integer", shapeNumber: "a number",
	shapeBool: "true or false", shapeArray: "an array", shapeMap: "an object", shapeStruct: "an object", shapeParsed: "a JSON string"}

func (w *shapeWalker) wrongKind(sh *shape, got string) error {
	return w.fail("invalid-field", "want %s, got %s", kindNames[sh.kind], got)
}

func (w *shapeWalker) value(sh *shape) error {
	err := w.value1(sh)
	var re *requestError
	if sh.fp && errors.As(err, &re) {
		re.kind = "bad-fingerprint"
	}
	return err
}

func (w *shapeWalker) value1(sh *shape) error {
	w.ws()
	if w.i >= len(w.b) {
		return errMalformed
	}
	switch c := w.b[w.i]; {
	case c == '{':
		if sh.kind != shapeStruct && sh.kind != shapeMap && sh.kind != shapeAny {
			return w.wrongKind(sh, "an object")
		}
		return w.object(sh)
	case c == '[':
		if sh.kind != shapeArray && sh.kind != shapeAny {
			return w.wrongKind(sh, "an array")
		}
		return w.array(sh)
	case c == '"':
		s, err := w.str()
		if err != nil {
			return err
		}
		switch sh.kind {
		case shapeString, shapeAny:
			return nil
		case shapeParsed:
			if err := sh.parse(s); err != nil {
				if errors.Is(err, fingerprint.ErrBadFingerprint) {
					return badFingerprint(w.field(), err)
				}
				return w.fail("invalid-field", "%v", err)
			}
			return nil
		}
		return w.wrongKind(sh, "a string")
	case c == 't' || c == 'f' || c == 'n':
		lit := "null"
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		if !strings.HasPrefix(string(w.b[w.i:min(len(w.b), w.i+len(lit))]), lit) {
			return errMalformed
		}
		w.i += len(lit)
		if c == 'n' {
			return w.fail("invalid-field", "null is not a value here: leave the field out")
		}
		if sh.kind != shapeBool && sh.kind != shapeAny {
			return w.wrongKind(sh, lit)
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		start := w.i
		integer, ok := w.number()
		if !ok {
			return errMalformed
		}
		switch {
		case sh.kind == shapeInt && integer, sh.kind == shapeNumber, sh.kind == shapeAny:
			return nil
		}
		return w.wrongKind(sh, string(w.b[start:w.i]))
	}
	return errMalformed
}

func (w *shapeWalker) object(sh *shape) error {
	if w.opened('}') {
		return nil
	}
	for {
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return errMalformed
		}
		key, err := w.str()
		if err != nil {
			return err
		}
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return errMalformed
		}
		w.i++
		elem := sh.elem
		if sh.kind == shapeStruct {
			if elem = sh.fields[key]; elem == nil {
				w.path = append(w.path, key)
				return w.fail("unknown-field", "unknown field; see /openapi.json for the request schema")
			}
		}
		if elem == nil {
			elem = &shape{} // shapeAny
		}
		if end, err := w.member(elem, key, '}'); end || err != nil {
			return err
		}
	}
}

func (w *shapeWalker) array(sh *shape) error {
	if w.opened(']') {
		return nil
	}
	elem := sh.elem
	if elem == nil {
		elem = &shape{}
	}
	for n := 0; ; n++ {
		if end, err := w.member(elem, n, ']'); end || err != nil {
			return err
		}
	}
}

// opened steps past an object's or array's opening byte and reports
// whether closer follows at once (an empty one, stepped past as well).
func (w *shapeWalker) opened(closer byte) (empty bool) {
	w.i++
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == closer {
		w.i++
		return true
	}
	return false
}

// member walks an object's or array's member (its value of shape elem, at
// path element at) and the comma or closing byte closer after it; end says
// that it was the last.
func (w *shapeWalker) member(elem *shape, at any, closer byte) (end bool, err error) {
	w.path = append(w.path, at)
	if err := w.value(elem); err != nil {
		return false, err
	}
	w.path = w.path[:len(w.path)-1]
	w.ws()
	if w.i >= len(w.b) {
		return false, errMalformed
	}
	switch w.b[w.i] {
	case ',':
		w.i++
		return false, nil
	case closer:
		w.i++
		return true, nil
	}
	return false, errMalformed
}

// str reads a string (w.i on its opening quote) and returns its value.
func (w *shapeWalker) str() (string, error) {
	start := w.i
	w.i++
	escaped := false
	for w.i < len(w.b) {
		switch c := w.b[w.i]; {
		case c == '"':
			w.i++
			raw := w.b[start:w.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errMalformed
			}
			return s, nil
		case c == '\\':
			escaped = true
			w.i += 2
		case c < 0x20:
			return "", errMalformed
		default:
			w.i++
		}
	}
	return "", errMalformed
}

// number reads a JSON number; integer is false when it has a fraction or
// an exponent.
func (w *shapeWalker) number() (integer, ok bool) {
	if w.b[w.i] == '-' {
		w.i++
	}
	digits := func() int {
		n := 0
		for w.i < len(w.b) && w.b[w.i] >= '0' && w.b[w.i] <= '9' {
			w.i++
			n++
		}
		return n
	}
	start := w.i
	n := digits()
	if n == 0 || n > 1 && w.b[start] == '0' {
		return false, false
	}
	integer = true
	if w.i < len(w.b) && w.b[w.i] == '.' {
		w.i++
		if digits() == 0 {
			return false, false
		}
		integer = false
	}
	if w.i < len(w.b) && (w.b[w.i] == 'e' || w.b[w.i] == 'E') {
		w.i++
		if w.i < len(w.b) && (w.b[w.i] == '+' || w.b[w.i] == '-') {
			w.i++
		}
		if digits() == 0 {
			return false, false
		}
		integer = false
	}
	return integer, true
}
