package server

// Index writes sent on to the writer. In an index whose writers take turns
// under one lease (index format 10), only the server holding the lease
// writes; the others send each index write (insert, batch insert, delete)
// on to it, at the URL it advertised in the lease, and return its answer.
// So a load balancer can spread every request over every server, and a
// standby still answers checks and reads itself.
//
// A forwarded request carries headerForwardedBy: its receiver never sends
// it on again, so a lease that moved between the two servers' reads ends
// in a 503 not-writer (retry) rather than a loop. When the holder cannot
// be reached the standby answers 503 not-writer with Retry-After, as it
// did before it knew where the holder was.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/storage"
)

const (
	// headerForwardedBy marks a request a standby sent on to the writer
	// (its value: the standby's advertised URL).
	headerForwardedBy = "Simdex-Forwarded-By"
	// headerWriter names, on a forwarded request's answer, the server
	// that wrote (the lease holder's host:pid).
	headerWriter = "Simdex-Writer"
)

// forwarder sends index writes on to the writer lease's holder.
type forwarder struct {
	self      string // this server's advertised URL ("" when none)
	transport http.RoundTripper
	sent      *prometheus.CounterVec // by outcome: "answered", "failed"
}

func newForwarder(self string, reg prometheus.Registerer) (*forwarder, error) {
	f := &forwarder{
		self: self,
		transport: &http.Transport{
			Proxy:                 nil, // server to server on the operator's network
			DialContext:           (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simdex_writes_forwarded_total",
			Help: "Index writes this server sent on to the writer lease's holder, by outcome: answered (whatever the holder answered) or failed (the holder could not be reached; answered 503 not-writer).",
		}, []string{"outcome"}),
	}
	for _, o := range []string{"answered", "failed"} {
		f.sent.WithLabelValues(o)
	}
	if reg != nil {
		if err := reg.Register(f.sent); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	return f, nil
}

// close drops the forwarder's idle connections.
func (f *forwarder) close() {
	if t, ok := f.transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
}

// forwardWrites is the middleware of the index write routes: on a server
// that is not the writer of an index whose writers take turns, it sends
// the request on to the holder instead of running the handler.
func (s *Server) forwardWrites(c *gin.Context) {
	if s.fwd == nil || !s.ix.WriterLease() || c.GetHeader(headerForwardedBy) != "" {
		c.Next()
		return
	}
	var nw *storage.NotWriterError
	if err := s.ix.Writable(c.Request.Context()); err == nil || !errors.As(err, &nw) || nw.URL == "" || nw.URL == s.fwd.self {
		// The writer, or no holder to send it to: the handler answers
		// (a write it cannot make is 503 not-writer).
		c.Next()
		return
	}
	target, err := url.Parse(nw.URL)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		s.fail(c, fmt.Errorf("%w; its advertised URL %q is not an http(s) URL", nw, nw.URL))
		c.Abort()
		return
	}
	s.fwd.serve(c, s, target, nw)
	c.Abort()
}

// serve proxies c's request to target, the holder nw names.
func (f *forwarder) serve(c *gin.Context, s *Server, target *url.URL, nw *storage.NotWriterError) {
	id := c.GetString(requestIDKey)
	failed := false
	rp := &httputil.ReverseProxy{
		Transport: f.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
			pr.SetXForwarded()
			pr.Out.Header.Set(headerForwardedBy, f.forwardedBy())
			pr.Out.Header.Set(headerRequestID, id)
		},
		ModifyResponse: func(r *http.Response) error {
			// The request id is this server's, already set on the answer.
			r.Header.Del(headerRequestID)
			r.Header.Set(headerWriter, nw.Holder)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			failed = true
			var tooLarge *http.MaxBytesError
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &tooLarge) {
				// The client's deadline or its body, not the holder.
				s.fail(c, err)
				return
			}
			s.log.WarnContext(c.Request.Context(), "sending a write on to the writer failed", "writer", nw.Holder, "url", nw.URL, "err", err, "request_id", id)
			s.fail(c, fmt.Errorf("%w; sending the write there failed: %v", nw, err))
		},
	}
	rp.ServeHTTP(c.Writer, c.Request)
	if failed {
		f.sent.WithLabelValues("failed").Inc()
	} else {
		f.sent.WithLabelValues("answered").Inc()
	}
}

// forwardedBy is the value of headerForwardedBy this server sends.
func (f *forwarder) forwardedBy() string {
	if f.self != "" {
		return f.self
	}
	return "unadvertised"
}

// advertisedURL is the URL this server records in the writer lease for
// the others to send writes to: cfg.AdvertiseURL, or else one made from
// the listening address (its host name when it listens on every
// interface); "" for "-" (none: the others answer writes 503 not-writer).
func advertisedURL(cfg Config, listening net.Addr) string {
	switch cfg.AdvertiseURL {
	case "-":
		return ""
	case "":
	default:
		return strings.TrimSuffix(cfg.AdvertiseURL, "/")
	}
	host, port, err := net.SplitHostPort(listening.String())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		name, err := os.Hostname()
		if err != nil || name == "" {
			return ""
		}
		host = name
	}
	return "http://" + net.JoinHostPort(host, port)
}

// validAdvertiseURL checks Config.AdvertiseURL.
func validAdvertiseURL(s string) error {
	if s == "" || s == "-" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("advertise URL %q: want http(s)://host:port with no query, fragment or user (\"-\": none)", s)
	}
	return nil
}
