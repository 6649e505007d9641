package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
)

// problem is an RFC 9457 problem details object.
type problem struct {
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail,omitempty"`
	Instance string         `json:"instance,omitempty"`
	Kind     string         `json:"kind"`
	Errors   []fieldProblem `json:"errors,omitempty"`
}

type fieldProblem struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// requestError is a client mistake found by the server itself (validation
// of fields the lower layers do not see).
type requestError struct {
	kind   string // problem kind, e.g. "invalid-field"
	field  string // JSON field, "" when the whole request is at fault
	detail string
}

func (e *requestError) Error() string {
	if e.field != "" {
		return e.field + ": " + e.detail
	}
	return e.detail
}

func badField(field, format string, args ...any) error {
	return &requestError{kind: "invalid-field", field: field, detail: fmt.Sprintf(format, args...)}
}

func badRequest(kind, format string, args ...any) error {
	return &requestError{kind: kind, detail: fmt.Sprintf(format, args...)}
}

// errUnauthorized and errTooManyItems are returned by middleware and handlers.
var (
	errUnauthorized = errors.New("server: missing or invalid API key")
	errNotFound     = errors.New("server: no such route")
	errNoMethod     = errors.New("server: method not allowed")
)

// classify maps any error to a problem: the one place where errors become
// HTTP statuses. Unknown errors are 500 without internal detail.
func classify(err error) problem {
	var (
		re       *requestError
		maxBytes *http.MaxBytesError
		syntax   *json.SyntaxError
		typeErr  *json.UnmarshalTypeError
	)
	p := func(status int, kind, title, detail string) problem {
		return problem{Type: "urn:simdex:problem:" + kind, Title: title, Status: status, Detail: detail, Kind: kind}
	}
	if status, kind, title, ok := seenProblem(err); ok {
		return p(status, kind, title, err.Error())
	}
	switch {
	case errors.As(err, &re):
		pr := p(http.StatusBadRequest, re.kind, requestTitle(re.kind), re.Error())
		if re.field != "" {
			pr.Errors = []fieldProblem{{Field: re.field, Detail: re.detail}}
		}
		return pr
	case errors.As(err, &maxBytes):
		return p(http.StatusRequestEntityTooLarge, "body-too-large", "Request body too large",
			fmt.Sprintf("the body is larger than the limit of %d bytes", maxBytes.Limit))
	case errors.Is(err, fingerprint.ErrTooLarge):
		return p(http.StatusRequestEntityTooLarge, "document-too-large", "Document too large", err.Error())
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return p(http.StatusBadRequest, "malformed-json", "Malformed JSON", err.Error())
	case errors.As(err, &typeErr):
		field := jsonField(typeErr.Field)
		detail := fmt.Sprintf("want %s, got %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
		pr := p(http.StatusBadRequest, "invalid-field", "Invalid request", fmt.Sprintf("field %q: %s", field, detail))
		pr.Errors = []fieldProblem{{Field: field, Detail: detail}}
		return pr
	case errors.Is(err, errUnauthorized):
		return p(http.StatusUnauthorized, "unauthorized", "Unauthorized", "this endpoint needs an API key: send \"Authorization: Bearer <key>\"")
	case errors.Is(err, errNotFound):
		return p(http.StatusNotFound, "no-route", "Not found", "no such endpoint; see /openapi.json")
	case errors.Is(err, errNoMethod):
		return p(http.StatusMethodNotAllowed, "method-not-allowed", "Method not allowed", "this endpoint does not take that method; see /openapi.json")
	case errors.Is(err, fingerprint.ErrInvalidUTF8):
		return p(http.StatusBadRequest, "invalid-utf8", "Invalid UTF-8", err.Error())
	case errors.Is(err, fingerprint.ErrEmpty):
		return p(http.StatusUnprocessableEntity, "empty-document", "Empty document", err.Error())
	case errors.Is(err, fingerprint.ErrBadFingerprint):
		return p(http.StatusBadRequest, "bad-fingerprint", "Bad fingerprint", err.Error())
	case errors.Is(err, kvindex.ErrBadK):
		return p(http.StatusBadRequest, "k-out-of-range", "Distance out of range", err.Error())
	case errors.Is(err, kvindex.ErrBadID):
		return p(http.StatusBadRequest, "bad-id", "Bad document id", err.Error())
	case errors.Is(err, kvindex.ErrBadDocument):
		return p(http.StatusBadRequest, "bad-document", "Document cannot be stored", err.Error())
	case errors.Is(err, kvindex.ErrBadOptions):
		return p(http.StatusBadRequest, "invalid-field", "Invalid request", err.Error())
	case errors.Is(err, fingerprint.ErrBadLang):
		return p(http.StatusBadRequest, "invalid-field", "Invalid request", err.Error())
	case errors.Is(err, kvindex.ErrClosed):
		return p(http.StatusServiceUnavailable, "shutting-down", "Shutting down", "the server is shutting down; retry on another instance")
	case errors.Is(err, kvindex.ErrNotFound):
		return p(http.StatusNotFound, "not-found", "Document not found", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return p(http.StatusServiceUnavailable, "timeout", "Request timed out", "the store did not answer within the request deadline; retry later")
	case errors.Is(err, kvindex.ErrDenied):
		// Not an outage: a retry is refused the same way until an operator
		// grants the server's principal what it lacks, so no 503.
		return p(http.StatusInternalServerError, "store-denied", "Store refused the server", "the index store refused this server's identity the operation (a missing permission); the server's log names it")
	case errors.Is(err, kvindex.ErrNotWriter):
		return p(http.StatusServiceUnavailable, "not-writer", "Not the writer", "another server holds the index's writer lease, so this one does not write until it takes the lease over; send writes to the holder or retry later: "+err.Error())
	case errors.Is(err, kvindex.ErrStore):
		return p(http.StatusServiceUnavailable, "store-unavailable", "Store unavailable", "the index store is unavailable; retry later")
	case errors.Is(err, context.Canceled):
		// The client went away; the status is never seen by it.
		return p(499, "canceled", "Request canceled", "the client closed the request")
	case errors.Is(err, kvindex.ErrCorrupt):
		return p(http.StatusInternalServerError, "corrupt-index", "Index data is corrupt", err.Error())
	default:
		return p(http.StatusInternalServerError, "internal", "Internal error", "an unexpected error occurred; it has been logged")
	}
}

// requestTitle is the title of a requestError's kind: the one the same
// kind has when a lower layer finds the fault.
func requestTitle(kind string) string {
	switch kind {
	case "bad-fingerprint":
		return "Bad fingerprint"
	case "k-out-of-range":
		return "Distance out of range"
	case "bad-id":
		return "Bad document id"
	case "bad-user":
		return "Bad user id"
	case "malformed-json":
		return "Malformed JSON"
	case "invalid-utf8":
		return "Invalid UTF-8"
	}
	return "Invalid request"
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer in range"
	case strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "string":
		return "a JSON string"
	case goKind == "bool":
		return "true or false"
	case goKind == "slice":
		return "an array"
	case goKind == "map", goKind == "struct":
		return "an object"
	}
	return goKind
}

// jsonField is encoding/json's path of a field without the names of the
// embedded Go structs in it (docInput.fingerprint is fingerprint): the
// API's JSON names are lower case, Go type names are not.
func jsonField(path string) string {
	parts := strings.Split(path, ".")
	out := parts[:0]
	for _, p := range parts {
		if strings.IndexFunc(p, func(r rune) bool { return r >= 'A' && r <= 'Z' }) < 0 {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// fail writes err as problem+json and records it. Handlers return right
// after calling it.
func (s *Server) fail(c *gin.Context, err error) {
	pr := classify(err)
	pr.Instance = c.Request.URL.Path
	s.metrics.errors.WithLabelValues(pr.Kind).Inc()
	if pr.Status >= 500 {
		s.log.ErrorContext(c.Request.Context(), "request failed", "status", pr.Status, "kind", pr.Kind, "err", err, "request_id", c.GetString(requestIDKey))
	} else {
		s.log.DebugContext(c.Request.Context(), "request rejected", "status", pr.Status, "kind", pr.Kind, "err", err, "request_id", c.GetString(requestIDKey))
	}
	if pr.Status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "1")
	}
	if pr.Status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="simdex"`)
	}
	writeJSON(c, pr.Status, "application/problem+json", pr)
	c.Abort()
}

// encodeBufs holds response buffers; the body is written before the
// buffer is put back, so none outlives its request.
var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func writeJSON(c *gin.Context, status int, contentType string, v any) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 { // do not keep the memory of a rare huge answer
			encodeBufs.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	if err := enc.Encode(v); err != nil { // Encode ends the value with '\n'
		// Every response type is plain data; a failure here is a bug.
		status, contentType = http.StatusInternalServerError, "application/problem+json"
		buf.Reset()
		buf.WriteString(`{"type":"urn:simdex:problem:internal","title":"Internal error","status":500,"kind":"internal"}` + "\n")
	}
	switch contentType { // constant strings: no concatenation per response
	case "application/json":
		contentType = "application/json; charset=utf-8"
	case "application/problem+json":
		contentType = "application/problem+json; charset=utf-8"
	default:
		contentType += "; charset=utf-8"
	}
	c.Data(status, contentType, buf.Bytes())
}
