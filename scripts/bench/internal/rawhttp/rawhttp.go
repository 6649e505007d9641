// Package rawhttp is the benchmarks' HTTP/1.1 client for one keep-alive
// connection to a loopback server: requests are prebuilt bytes, answers
// are read into the caller's buffer with nothing allocated per request.
// The timed loops of loadgen and seenbench use it rather than net/http's
// client, whose per-request goroutine hand-off, header maps and body
// reader cost the load generator more CPU than the server spends on a
// small request (on a 2-core machine the two share the cores).
package rawhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrResponse is wrapped by every malformed or unexpected answer.
var ErrResponse = errors.New("rawhttp: unexpected response")

// MaxBody bounds an answer's Content-Length.
const MaxBody = 16 << 20

// PostHead is a POST's request line and fixed headers up to and including
// "Content-Length: ": AppendPost completes it per request. headers are
// extra "Name: value" lines (without line ends), e.g. an Authorization.
func PostHead(host, path string, headers ...string) []byte {
	b := []byte("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n")
	for _, h := range headers {
		b = append(b, h...)
		b = append(b, "\r\n"...)
	}
	return append(b, "Content-Length: "...)
}

// AppendPost appends a whole POST of body to dst: head (PostHead), the
// body's length, the blank line and body.
func AppendPost(dst, head, body []byte) []byte {
	dst = append(dst, head...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// Read reads one response from r: an HTTP/1.1 status line and CRLF-ended
// headers with exactly one Content-Length (at most MaxBody; a chunked body
// is an error), then the body, returned in dst's memory (grown when too
// small). closing reports a "Connection: close" header: the caller must
// not send another request on the connection. On an error the
// connection's framing is lost.
func Read(r *bufio.Reader, dst []byte) (status int, body []byte, closing bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, dst, true, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 14 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) || (line[12] != ' ' && line[12] != '\r') || line[len(line)-2] != '\r' {
		return 0, dst, true, fmt.Errorf("%w: status line %q", ErrResponse, line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil || status < 100 {
		return 0, dst, true, fmt.Errorf("%w: status line %q", ErrResponse, line)
	}
	n := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return status, dst, true, err
		}
		if len(line) < 2 || line[len(line)-2] != '\r' {
			return status, dst, true, fmt.Errorf("%w: header line %q", ErrResponse, line)
		}
		line = line[:len(line)-2]
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return status, dst, true, fmt.Errorf("%w: header line %q", ErrResponse, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Length"):
			v, err := strconv.Atoi(string(value))
			if err != nil || v < 0 || v > MaxBody || n >= 0 {
				return status, dst, true, fmt.Errorf("%w: Content-Length %q", ErrResponse, value)
			}
			n = v
		case asciiEqualFold(name, "Transfer-Encoding"):
			return status, dst, true, fmt.Errorf("%w: Transfer-Encoding %q", ErrResponse, value)
		case asciiEqualFold(name, "Connection"):
			closing = asciiEqualFold(value, "close")
		}
	}
	if n < 0 {
		return status, dst, true, fmt.Errorf("%w: no Content-Length", ErrResponse)
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	if _, err := io.ReadFull(r, dst); err != nil {
		return status, dst, true, err
	}
	return status, dst, closing, nil
}

// asciiEqualFold reports whether b and s are equal ignoring ASCII case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
