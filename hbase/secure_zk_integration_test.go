package hbase

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// zkAuth logs k in for a direct ZooKeeper lookup, destroyed when the test
// ends.
func zkAuth(t *testing.T, k *Kerberos) *kerberosAuth {
	t.Helper()
	a, err := newKerberosAuth(k.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.destroy)
	return a
}

// TestSecureZooKeeperSASL: the secured HBase's ZooKeeper authenticates the
// client by SASL GSSAPI (as zookeeper/localhost, named from the quorum's
// 127.0.0.1 by reverse lookup or given as localhost), and the client reads
// and writes through it; when it requires SASL, a client without Kerberos
// (or told not to use it for ZooKeeper) gets a clear ErrSecurity at once
// rather than a hang or retries; a ZooKeeper principal that is not
// ZooKeeper's is refused, by the KDC or by ZooKeeper, naming it. A
// ZooKeeper without SASL (SIMDEX_HBASE_ZK_SASL=off) is read unauthenticated,
// and a Kerberos client is told to read it so.
func TestSecureZooKeeperSASL(t *testing.T) {
	s := hbasetest.Secure(t)
	ctx := testCtx(t)
	log := slog.New(slog.DiscardHandler)
	_, port, err := net.SplitHostPort(s.ZK)
	if err != nil {
		t.Fatal(err)
	}
	good := keytabAuth(s, "simdex", "simdex.keytab")
	data, err := zkLookup(ctx, []string{s.ZK}, "/hbase", "/master", nil, log)
	if s.ZKRequiresSASL() {
		if !errors.Is(err, ErrSecurity) {
			t.Fatalf("unauthenticated lookup on a ZooKeeper requiring SASL: %v, want ErrSecurity", err)
		}
	} else if _, perr := parseMasterZnode(data); err != nil || perr != nil {
		t.Fatalf("unauthenticated lookup on a ZooKeeper not requiring SASL: %v %v", err, perr)
	}
	if s.ZKSASL == "off" {
		_, err := zkLookup(ctx, []string{s.ZK}, "/hbase", "/master", zkAuth(t, good), log)
		if !errors.Is(err, ErrSecurity) || !strings.Contains(err.Error(), "no SASL login") || !strings.Contains(err.Error(), "--hbase-zk-sasl=false") {
			t.Fatalf("Kerberos lookup on a ZooKeeper without SASL: %v\nwant ErrSecurity saying it has no SASL login", err)
		}
		t.Logf("%v", err)
		plain := keytabAuth(s, "simdex", "simdex.keytab")
		plain.ZooKeeperPlain = true
		roundTrip(t, secureClient(t, s.ZK, plain, s.TLSConfig(t, false)))
		return
	}
	for _, zk := range []string{s.ZK, net.JoinHostPort("localhost", port)} {
		data, err := zkLookup(ctx, []string{zk}, "/hbase", "/master", zkAuth(t, good), log)
		if err != nil {
			t.Fatalf("authenticated lookup on %s: %v", zk, err)
		}
		if sn, err := parseMasterZnode(data); err != nil || sn.Port == 0 {
			t.Fatalf("master znode on %s: %v %v", zk, sn, err)
		}
	}
	// A member that refuses connections is passed over, whichever member
	// the lookup starts with.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	for range 4 {
		if _, err := zkLookup(ctx, []string{dead, s.ZK}, "/hbase", "/master", zkAuth(t, good), log); err != nil {
			t.Fatalf("lookup on a quorum with a dead member: %v", err)
		}
	}
	t.Run("reads and writes", func(t *testing.T) {
		roundTrip(t, secureClient(t, s.ZK, keytabAuth(s, "simdex", "simdex.keytab"), s.TLSConfig(t, false)))
	})

	type tcase struct {
		name string
		krb  *Kerberos
		tls  bool
		want []string // all in the error message
		// closes: the ZooKeeper closes the session without a reason
		// (before 3.6: HBase 3.0.0-alpha-4's 3.5.7), which the client
		// retries, as it would a member going down, naming the cause.
		closes bool
	}
	withZK := func(f func(*Kerberos)) *Kerberos { k := keytabAuth(s, "simdex", "simdex.keytab"); f(k); return k }
	cases := []tcase{
		{"unknown ZooKeeper principal", withZK(func(k *Kerberos) { k.ZooKeeperPrincipal = "zookeeper/otherhost" }), true,
			[]string{"zookeeper/otherhost", "service ticket"}, false},
		{"principal that is not ZooKeeper's", withZK(func(k *Kerberos) { k.ZooKeeperPrincipal = "hbase/_HOST" }), true,
			[]string{"hbase/localhost", "refused the Kerberos", "simdex@SIMDEX.TEST"}, false},
	}
	if strings.HasPrefix(s.Version, "3.0.0-alpha") {
		cases[1].want, cases[1].closes = []string{"hbase/localhost", "closed the session on the Kerberos", "simdex@SIMDEX.TEST"}, true
	}
	if s.ZKRequiresSASL() {
		cases = append(cases,
			tcase{"no Kerberos", nil, true, []string{"requires SASL", "does the cluster require Kerberos?"}, false},
			tcase{"Kerberos but not for ZooKeeper", withZK(func(k *Kerberos) { k.ZooKeeperPlain = true }), true,
				[]string{"requires SASL", "--hbase-zk-sasl=false"}, false},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{ZooKeeper: []string{s.ZK}, Kerberos: tc.krb, TLS: s.TLSConfig(t, false), MaxRetries: 5})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			start := time.Now()
			_, err = c.Namespaces(cctx)
			took := time.Since(start)
			if err == nil {
				t.Fatal("Namespaces succeeded")
			}
			switch {
			case tc.closes && !errors.Is(err, ErrConnection):
				t.Fatalf("Namespaces: %v\nwant a connection error", err)
			case !tc.closes && (!errors.Is(err, ErrSecurity) || IsRetryable(err) || errors.Is(err, ErrRetriesExhausted)):
				t.Fatalf("Namespaces: %v\nwant a non-retryable ErrSecurity", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("Namespaces: %v\nwant it to say %q", err, w)
				}
			}
			// One ZooKeeper exchange, not a session timeout or retries.
			if !tc.closes && took > 10*time.Second {
				t.Fatalf("the error took %v", took)
			}
			t.Logf("%v (%v)", err, took.Round(time.Millisecond))
		})
	}
}
