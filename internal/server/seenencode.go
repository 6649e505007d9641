package server

import (
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/simdex/simdex/seen"
)

// Direct encoders for the seen routes' read answers: byte for byte what
// writeJSON (encoding/json with its default HTML escaping) writes for
// seenFilterResponse, seenCheckResponse and their batch forms, without
// reflection or the intermediate response structs (FuzzSeenEncode checks
// the bytes against encoding/json). Why: encoding the kept list through
// reflection was ~10% of a filter's CPU, and building filterResponse
// allocated a pointer per near-duplicate.

// respBufs holds response buffers (a filter answer of 1,000 ids is
// ~20 KB).
var respBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// writeAppended answers 200 with the JSON that appendBody appends.
func writeAppended(c *gin.Context, appendBody func([]byte) []byte) {
	bp := respBufs.Get().(*[]byte)
	b := appendBody((*bp)[:0])
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
	if cap(b) <= 1<<20 { // do not keep the memory of a rare huge answer
		*bp = b
		respBufs.Put(bp)
	}
}

func appendFilterResponse(b []byte, user string, r seen.FilterResult) []byte {
	b = appendFilterObject(b, user, r)
	return append(b, '\n') // as json.Encoder ends a value
}

func appendFilterObject(b []byte, user string, r seen.FilterResult) []byte {
	b = append(b, `{"user":`...)
	b = appendJSONString(b, user)
	b = append(b, `,"kept":`...)
	b = appendStrings(b, r.Kept)
	b = append(b, `,"dropped":[`...) // never null: filterResponse makes it
	for i, d := range r.Dropped {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(d.Index), 10)
		b = append(b, `,"id":`...)
		b = appendJSONString(b, d.ID)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, d.Reason)
		if d.Reason == seen.ReasonNear {
			b = append(b, `,"distance":`...)
			b = strconv.AppendInt(b, int64(d.Distance), 10)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if len(r.UnknownDocs) > 0 { // omitempty
		b = append(b, `,"unknown_doc_ids":`...)
		b = appendStrings(b, r.UnknownDocs)
	}
	return append(b, '}')
}

// appendFilterForm appends the filter answer r in form (the response
// structs it matches byte for byte: seenFilterResponse,
// seenFilterKeptResponse, seenFilterIndexesResponse).
func appendFilterForm(b []byte, user string, r seen.FilterResult, form answerForm) []byte {
	switch form {
	case answerKept:
		b = append(b, `{"user":`...)
		b = appendJSONString(b, user)
		b = append(b, `,"kept":`...)
		b = appendStrings(b, r.Kept)
	case answerIndexes:
		b = append(b, `{"user":`...)
		b = appendJSONString(b, user)
		b = append(b, `,"kept_indexes":[`...)
		// Dropped is in candidate order: the kept positions are the gaps
		// between its indexes, up to len(Kept)+len(Dropped).
		n, next, first := len(r.Kept)+len(r.Dropped), 0, true
		for i := 0; i < n; i++ {
			if next < len(r.Dropped) && r.Dropped[next].Index == i {
				next++
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = strconv.AppendInt(b, int64(i), 10)
		}
		b = append(b, ']')
	default:
		return appendFilterObject(b, user, r)
	}
	if len(r.UnknownDocs) > 0 { // omitempty
		b = append(b, `,"unknown_doc_ids":`...)
		b = appendStrings(b, r.UnknownDocs)
	}
	return append(b, '}')
}

// appendFilterFlags appends the compact answer (form answerKept or
// answerIndexes) of a plain-id filter from its flags (dropped[i]: ids[i]
// is dropped), byte for byte what appendFilterForm writes for the
// equivalent FilterResult (a plain-id filter has no unknown documents).
func appendFilterFlags(b []byte, user string, ids []string, dropped []bool, form answerForm) []byte {
	b = append(b, `{"user":`...)
	b = appendJSONString(b, user)
	if form == answerIndexes {
		b = append(b, `,"kept_indexes":[`...)
	} else {
		b = append(b, `,"kept":[`...)
	}
	first := true
	for i, d := range dropped {
		if d {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		if form == answerIndexes {
			b = strconv.AppendInt(b, int64(i), 10)
		} else {
			b = appendJSONString(b, ids[i])
		}
	}
	return append(b, "]}"...)
}

func appendCheckObject(b []byte, user string, seenIDs []bool) []byte {
	b = append(b, `{"user":`...)
	b = appendJSONString(b, user)
	b = append(b, `,"seen":`...)
	if seenIDs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range seenIDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendBool(b, s)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendBatch appends {"results":[obj(0),...,obj(n-1)]} and a newline.
func appendBatch(b []byte, n int, obj func(b []byte, i int) []byte) []byte {
	b = append(b, `{"results":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = obj(b, i)
	}
	return append(b, "]}\n"...)
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// jsonSafe marks the ASCII bytes encoding/json writes as they are (with
// HTML escaping, its default): printable ASCII but '"', '\\', '<', '>'
// and '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json does:
// the two-character escapes for '"', '\\', \b, \f, \n, \r and \t, \u00XX
// for other control bytes and for '<', '>', '&', \ufffd for each byte of
// invalid UTF-8, and \u2028 and \u2029 escaped (JavaScript line ends).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // s[start:i] is pending, to be copied as is
	for i := safeRun(s, 0); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
