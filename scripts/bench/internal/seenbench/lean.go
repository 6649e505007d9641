package seenbench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/simdex/simdex/scripts/bench/internal/rawhttp"
)

// The lean clients of the filter comparison. Both sides get the same
// treatment inside the timed region: write prebuilt request bytes on one
// keep-alive connection, read the whole answer, and decode it fully into
// a seen flag per candidate (the shape SMISMEMBER answers), with nothing
// allocated per candidate. Why hand-written: net/http's client (a
// goroutine hand-off per request, header maps, a body reader) cost more
// CPU than the Redis side's RESP client, so the REST figures carried
// client overhead Redis' did not.

// httpConn is a minimal HTTP/1.1 keep-alive client for one loopback
// server: requests are prebuilt (buildRequest), answers must be 200 with
// a Content-Length (the server always sends one for these routes).
type httpConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialHTTP(addr string) (*httpConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &httpConn{c: c, r: bufio.NewReaderSize(c, 1<<16)}, nil
}

// buildRequest is a POST of a JSON body to path (rawhttp), with the
// headers net/http's client sends (Host, User-Agent, Content-Length,
// Content-Type; Accept-Encoding is left out: the server does not
// compress).
func buildRequest(host, path string, body []byte) []byte {
	return rawhttp.AppendPost(make([]byte, 0, len(body)+160), rawhttp.PostHead(host, path, "User-Agent: seen-bench"), body)
}

// roundTrip writes req and reads one response, returning its body in
// dst's memory. Status other than 200 and "Connection: close" are errors
// besides rawhttp.Read's.
func (h *httpConn) roundTrip(req, dst []byte) ([]byte, error) {
	if _, err := h.c.Write(req); err != nil {
		return dst, err
	}
	return readResponse(h.r, dst)
}

// readResponse reads one response (see roundTrip).
func readResponse(r *bufio.Reader, dst []byte) ([]byte, error) {
	status, body, closing, err := rawhttp.Read(r, dst)
	switch {
	case err != nil:
		return body, err
	case status != 200:
		return body, fmt.Errorf("%w: status %d", rawhttp.ErrResponse, status)
	case closing:
		return body, fmt.Errorf("%w: the server closes the connection", rawhttp.ErrResponse)
	}
	return body, nil
}

// answer is one decoded answer: a seen flag per candidate, and what the
// REST forms say beside it (checked after the clock).
type answer struct {
	seen    []bool
	user    []byte   // the answer's "user" (REST)
	kept    [][]byte // kept ids (full and kept forms), aliasing the body
	dropIDs [][]byte // ids of dropped entries (full form), aliasing the body
	reasons int      // dropped entries whose reason is not "seen" (full form)
}

// reset sizes a for n candidates, keeping its memory.
func (a *answer) reset(n int) {
	if cap(a.seen) < n {
		a.seen = make([]bool, n)
	}
	a.seen = a.seen[:n]
	clear(a.seen)
	a.user, a.kept, a.dropIDs, a.reasons = nil, a.kept[:0], a.dropIDs[:0], 0
}

var errJSON = errors.New("json: unexpected answer")

// scanner reads the JSON answers of the seen routes: objects, arrays,
// strings without escapes (the bench's ids have none; an escape is an
// error, not skipped), non-negative integers and booleans.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\r' || s.b[s.i] == '\t') {
		s.i++
	}
}

func (s *scanner) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) str() ([]byte, error) {
	if !s.byte('"') {
		return nil, fmt.Errorf("%w: want a string at %d", errJSON, s.i)
	}
	start := s.i
	j := bytes.IndexByte(s.b[s.i:], '"')
	if j < 0 {
		return nil, fmt.Errorf("%w: unterminated string", errJSON)
	}
	v := s.b[start : start+j]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, fmt.Errorf("%w: escaped string", errJSON)
	}
	s.i = start + j + 1
	return v, nil
}

func (s *scanner) uint() (int, error) {
	s.ws()
	start, v := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && s.i-start < 9 {
		v = v*10 + int(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		return 0, fmt.Errorf("%w: want a small integer at %d", errJSON, start)
	}
	return v, nil
}

func (s *scanner) boolean() (bool, error) {
	s.ws()
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		return true, nil
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		return false, nil
	}
	return false, fmt.Errorf("%w: want a boolean at %d", errJSON, s.i)
}

// list reads an array, calling elem for each element.
func (s *scanner) list(elem func() error) error {
	if !s.byte('[') {
		return fmt.Errorf("%w: want an array at %d", errJSON, s.i)
	}
	if s.byte(']') {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if s.byte(']') {
			return nil
		}
		if !s.byte(',') {
			return fmt.Errorf("%w: want , or ] at %d", errJSON, s.i)
		}
	}
}

// object reads an object, calling field for each key (which aliases the
// body).
func (s *scanner) object(field func(key []byte) error) error {
	if !s.byte('{') {
		return fmt.Errorf("%w: want an object at %d", errJSON, s.i)
	}
	if s.byte('}') {
		return nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return err
		}
		if !s.byte(':') {
			return fmt.Errorf("%w: want : at %d", errJSON, s.i)
		}
		if err := field(k); err != nil {
			return err
		}
		if s.byte('}') {
			return nil
		}
		if !s.byte(',') {
			return fmt.Errorf("%w: want , or } at %d", errJSON, s.i)
		}
	}
}

func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return fmt.Errorf("%w: %d trailing bytes", errJSON, len(s.b)-s.i)
	}
	return nil
}

// decodeREST decodes a REST answer of form (check, full, kept, indexes)
// for the candidates ids into a (already reset for len(ids)): every field
// is parsed, and the per-candidate flags derived as a client would.
func decodeREST(body []byte, form string, ids []string, a *answer) error {
	s := scanner{b: body}
	strs := func(dst *[][]byte) error {
		return s.list(func() error {
			v, err := s.str()
			*dst = append(*dst, v)
			return err
		})
	}
	var unknown [][]byte
	haveKept, flags := false, 0
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "user":
			var err error
			a.user, err = s.str()
			return err
		case "seen": // check
			return s.list(func() error {
				if flags >= len(a.seen) {
					return fmt.Errorf("%w: more flags than candidates", errJSON)
				}
				v, err := s.boolean()
				a.seen[flags] = v
				flags++
				return err
			})
		case "kept": // full and kept forms
			haveKept = true
			return strs(&a.kept)
		case "kept_indexes":
			haveKept = true
			for k := range a.seen {
				a.seen[k] = true
			}
			prev := -1
			return s.list(func() error {
				v, err := s.uint()
				if err != nil {
					return err
				}
				if v <= prev || v >= len(a.seen) {
					return fmt.Errorf("%w: kept index %d out of order or range", errJSON, v)
				}
				a.seen[v], prev = false, v
				return nil
			})
		case "dropped":
			return s.list(func() error {
				idx := -1
				err := s.object(func(key []byte) error {
					switch string(key) {
					case "index":
						var err error
						idx, err = s.uint()
						return err
					case "id":
						v, err := s.str()
						a.dropIDs = append(a.dropIDs, v)
						return err
					case "reason":
						v, err := s.str()
						if string(v) != "seen" {
							a.reasons++
						}
						return err
					case "distance":
						_, err := s.uint()
						return err
					}
					return fmt.Errorf("%w: dropped field %q", errJSON, key)
				})
				if err == nil && (idx < 0 || idx >= len(a.seen)) {
					err = fmt.Errorf("%w: dropped index %d", errJSON, idx)
				}
				if err == nil {
					a.seen[idx] = true
				}
				return err
			})
		case "unknown_doc_ids":
			return strs(&unknown)
		}
		return fmt.Errorf("%w: field %q", errJSON, key)
	})
	if err == nil {
		err = s.end()
	}
	if err == nil && form == "kept" {
		// The kept ids are the unseen candidates in order.
		k := 0
		for j, id := range ids {
			if k < len(a.kept) && string(a.kept[k]) == id {
				k++
			} else {
				a.seen[j] = true
			}
		}
		if k != len(a.kept) {
			err = fmt.Errorf("%w: kept ids not a subsequence of the candidates", errJSON)
		}
	}
	if err == nil && form != "check" && !haveKept {
		err = fmt.Errorf("%w: no kept list", errJSON)
	}
	if err == nil && form == "check" && flags != len(ids) {
		err = fmt.Errorf("%w: %d flags for %d candidates", errJSON, flags, len(ids))
	}
	return err
}

var errReply = errors.New("redis: malformed reply")

// maxReplyElems bounds an array reply's length (SMISMEMBER of 1,000 ids
// answers 1,000) so that a corrupt length cannot make readFlags loop long.
const maxReplyElems = 1 << 20

// readFlags reads one SMISMEMBER reply (an array of integers 0 or 1) into
// dst, reusing its memory; an error reply is returned as an error.
func readFlags(r *bufio.Reader, dst []bool) ([]bool, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return dst, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return dst, fmt.Errorf("%w: line %q", errReply, line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '-':
		return dst, fmt.Errorf("redis: %s", body)
	case '*':
	default:
		return dst, fmt.Errorf("%w: want an array, got %q", errReply, line)
	}
	n, err := strconv.Atoi(string(body))
	if err != nil || n < 0 || n > maxReplyElems {
		return dst, fmt.Errorf("%w: array length %q", errReply, body)
	}
	dst = dst[:0]
	for range n {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return dst, err
		}
		if len(line) != 4 || line[0] != ':' || line[2] != '\r' || (line[1] != '0' && line[1] != '1') {
			return dst, fmt.Errorf("%w: element %q, want :0 or :1", errReply, line)
		}
		dst = append(dst, line[1] == '1')
	}
	return dst, nil
}
