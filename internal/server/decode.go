package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// decodeJSON reads the whole body (bounded by the MaxBytesReader installed by
// the body-limit middleware) and decodes it strictly into v: valid UTF-8
// only (encoding/json would silently turn bad bytes into U+FFFD), no
// unknown fields, exactly one JSON value.
//
// The body is read into a pooled buffer sized from Content-Length: decoding
// copies every string it keeps, so the buffer can be reused once v is
// filled.
func decodeJSON(c *gin.Context, v any) error {
	return withBody(c, func(body []byte) error { return decodeBytes(body, v) })
}

// withBody calls fn with the whole request body, which is only valid
// during the call.
func withBody(c *gin.Context, fn func([]byte) error) error {
	buf := bodyBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBody { // do not keep the memory of a rare huge body
			bodyBufs.Put(buf)
		}
	}()
	if err := readBody(c, buf); err != nil {
		return err
	}
	return fn(buf.Bytes())
}

// maxPooledBody is the largest body buffer kept for reuse.
const maxPooledBody = 1 << 20

// readBody appends the whole request body to buf, growing it once from
// Content-Length.
func readBody(c *gin.Context, buf *bytes.Buffer) error {
	if n := c.Request.ContentLength; n > 0 && n < maxPooledBody {
		buf.Grow(int(n) + bytes.MinRead) // ReadFrom wants MinRead spare bytes before it sees EOF
	}
	_, err := buf.ReadFrom(c.Request.Body)
	return err
}

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func decodeBytes(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("malformed-json", "the request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return badRequest("invalid-utf8", "the request body is not valid UTF-8 (at byte %d)", firstInvalidUTF8(body))
	}
	// The schema's rules that encoding/json does not keep (strict.go);
	// malformed JSON is the decoder's to report.
	if err := checkShape(body, v); err != nil && !errors.Is(err, errMalformed) {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &requestError{kind: "unknown-field", field: strings.Trim(msg, `"`), detail: "unknown field; see /openapi.json for the request schema"}
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return err
		}
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("malformed JSON: %w", err)
		}
		// Errors from UnmarshalText (e.g. a bad time) and the like.
		return badRequest("invalid-field", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("malformed-json", "the body holds more than one JSON value")
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}
