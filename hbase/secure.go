package hbase

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// dialSecurity is how dialConn secures a connection; the zero value is
// HBase's default, plaintext with SIMPLE authentication.
type dialSecurity struct {
	// tls, if not nil, runs TLS (HBase 2.6's Netty TLS) under everything
	// else; an empty ServerName is set to the server's host.
	tls *tls.Config
	// krb, if not nil, authenticates with SASL GSSAPI in the preamble.
	krb *kerberosAuth
}

// handshake secures nc, the fresh connection to addr: TLS, then for
// Kerberos the preamble and the SASL exchange. It returns the connection
// to send the connection header (and all calls) on, the preamble still to
// send before that header (none after Kerberos) and the effective user (the
// principal under Kerberos).
func (s dialSecurity) handshake(ctx context.Context, nc net.Conn, addr, user string) (net.Conn, []byte, string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if s.tls != nil {
		cfg := s.tls
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, nil, "", tlsError(addr, err)
		}
		nc = tc
	}
	if s.krb == nil {
		return nc, []byte("HBas\x00\x50"), user, nil
	}
	rw := bufio.NewReadWriter(bufio.NewReaderSize(nc, 16<<10), bufio.NewWriter(nc))
	if _, err := rw.Write([]byte{'H', 'B', 'a', 's', 0, authKerberos}); err != nil {
		return nil, nil, "", fmt.Errorf("%w: %s: send preamble: %w", ErrConnection, addr, err)
	}
	sc, _, err := saslHandshake(rw, nc, host, s.krb)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", addr, err)
	}
	return sc, nil, s.krb.principal(), nil
}

// tlsError says what a failed TLS handshake with addr most likely means.
func tlsError(addr string, err error) error {
	var (
		rh   tls.RecordHeaderError
		cv   *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		hn   x509.HostnameError
		ci   x509.CertificateInvalidError
		opEr *net.OpError
	)
	switch {
	case errors.As(err, &rh):
		return fmt.Errorf("%w: %s does not speak TLS (its RPC is plaintext) but the client was configured for TLS; drop the TLS settings for this cluster: %w", ErrSecurity, addr, err)
	case errors.As(err, &cv), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return fmt.Errorf("%w: %s: the server's certificate does not verify against the configured CA: %w", ErrSecurity, addr, err)
	case errors.As(err, &opEr):
		return fmt.Errorf("%w: %s: TLS handshake: %w", ErrConnection, addr, err)
	}
	return fmt.Errorf("%w: %s: TLS handshake: %w", ErrSecurity, addr, err)
}

// looksLikeTLS reports whether the first bytes a plaintext client read are
// a TLS record (an alert or handshake, version 3.x): the server wants TLS.
func looksLikeTLS(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03
}

// connCallID is the call id of a reply about the connection itself (HBase
// answers a refused preamble with call id -1 and closes).
const connCallID = ^uint32(0)

// connRefusal is the error a connection-level exception from addr stands
// for: a cluster that requires Kerberos the client was not given.
func connRefusal(addr string, re *RemoteError) error {
	return fmt.Errorf("%w: %s refused the connection (does the cluster require Kerberos? see --hbase-kerberos-principal): %w", ErrSecurity, addr, re)
}

// TLSFiles names the PEM files of a client TLS configuration, as commands
// take them (--hbase-tls-ca and the rest).
type TLSFiles struct {
	// Enabled turns TLS on; without CA the system's roots verify servers.
	Enabled bool
	// CA is a PEM bundle of the CAs that verify the servers' certificates.
	CA string
	// Cert and Key are the client's certificate and key (PEM), for a
	// cluster that wants client certificates; both or neither.
	Cert, Key string
	// ServerName, if set, is the name every server's certificate must
	// carry, instead of each server's own host name.
	ServerName string
}

// Config loads the files: nil when TLS is not enabled.
func (f TLSFiles) Config() (*tls.Config, error) {
	if !f.Enabled {
		if f.CA != "" || f.Cert != "" || f.Key != "" || f.ServerName != "" {
			return nil, fmt.Errorf("%w: TLS files given but TLS not enabled (--hbase-tls)", ErrInvalidArgument)
		}
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS CA: %w", ErrInvalidArgument, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: TLS CA %s: no PEM certificate in it", ErrInvalidArgument, f.CA)
		}
		cfg.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, fmt.Errorf("%w: TLS client certificate and key go together (cert %q, key %q)", ErrInvalidArgument, f.Cert, f.Key)
	}
	if f.Cert != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS client certificate: %w", ErrInvalidArgument, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
