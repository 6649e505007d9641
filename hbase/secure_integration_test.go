package hbase

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase/hfile"
	"github.com/simdex/simdex/internal/hbasetest"
)

// secureClient is a Client on the secured HBase with the Kerberos principal
// of user (keytab <keytab>.keytab; none when keytab is "") and TLS (none
// when tc is nil), closed when the test ends.
func secureClient(t testing.TB, zk string, krb *Kerberos, tc *tls.Config) *Client {
	t.Helper()
	c, err := New(Config{ZooKeeper: []string{zk}, Kerberos: krb, TLS: tc, MaxRetries: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// withProtection is simdex's Kerberos configuration taking min to max.
func withProtection(s *hbasetest.SecureCluster, min, max Protection) *Kerberos {
	k := keytabAuth(s, "simdex", "simdex.keytab")
	k.MinProtection, k.MaxProtection = min, max
	return k
}

// keytabAuth is the Kerberos configuration of user with its keytab in s.
func keytabAuth(s *hbasetest.SecureCluster, user, keytab string) *Kerberos {
	return &Kerberos{Principal: hbasetest.Principal(user), Keytab: s.Path(keytab), Krb5Conf: s.Krb5Conf()}
}

// roundTrip creates a table, writes rows of every size class (one larger
// than a SASL token, so that writes and replies span several), reads them
// back, scans them and drops the table.
func roundTrip(t *testing.T, c *Client) {
	t.Helper()
	ctx := testCtx(t)
	if err := c.CreateNamespace(ctx, testNamespace); err != nil && !errors.Is(err, ErrNamespaceExists) {
		t.Fatalf("CreateNamespace: %v", err)
	}
	name := testNamespace + ":" + uniqueName("sec")
	if err := c.CreateTable(ctx, &TableDescriptor{Name: name, Families: []FamilyDescriptor{{Name: "f"}}}, nil); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	defer func() {
		_ = c.DisableTable(ctx, name)
		_ = c.DeleteTable(ctx, name)
	}()
	sizes := []int{0, 1, 1000, 70 << 10, 300 << 10}
	for i, n := range sizes {
		v := make([]byte, n)
		_, _ = rand.Read(v)
		row := fmt.Appendf(nil, "r%d", i)
		if err := c.Put(ctx, name, &Put{Row: row, Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: v}}}); err != nil {
			t.Fatalf("Put %d bytes: %v", n, err)
		}
		res, err := c.Get(ctx, name, &Get{Row: row})
		if err != nil {
			t.Fatalf("Get %d bytes: %v", n, err)
		}
		if len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, v) {
			t.Fatalf("Get row %s: %d cells, want the %d-byte value back", row, len(res.Cells), n)
		}
	}
	ns, err := c.Namespaces(ctx)
	if err != nil || len(ns) == 0 {
		t.Fatalf("Namespaces: %v %v", ns, err)
	}
}

// TestSecureRoundTrip reads and writes on the secured HBase with each
// client configuration it accepts.
func TestSecureRoundTrip(t *testing.T) {
	s := hbasetest.Secure(t)
	for _, tc := range []struct {
		name string
		krb  *Kerberos
		tls  *tls.Config
	}{
		{"kerberos+tls+client-cert", keytabAuth(s, "simdex", "simdex.keytab"), s.TLSConfig(t, true)},
		{"kerberos+tls", keytabAuth(s, "simdex", "simdex.keytab"), s.TLSConfig(t, false)},
		{"kerberos-min-privacy+tls", withProtection(s, ProtectPrivacy, ProtectPrivacy), s.TLSConfig(t, false)},
		{"kerberos-integrity+tls", withProtection(s, ProtectIntegrity, ProtectIntegrity), s.TLSConfig(t, false)},
		{"kerberos-authentication+tls", withProtection(s, ProtectAuthentication, ProtectAuthentication), s.TLSConfig(t, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := tc.krb.MaxProtection; p != 0 && !s.Offers(p.String()) {
				t.Skipf("the secured HBase offers %s only", s.Protection)
			}
			roundTrip(t, secureClient(t, s.ZK, tc.krb, tc.tls))
		})
	}
}

// otherCA is a TLS configuration trusting a CA of its own, which signed
// none of the cluster's certificates.
func otherCA(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{RootCAs: pool}
}

// TestSecureErrors: every way of not matching the cluster's security fails
// at once (not retried) with ErrSecurity and a message that says why.
func TestSecureErrors(t *testing.T) {
	s := hbasetest.Secure(t)
	good := func() *Kerberos { return keytabAuth(s, "simdex", "simdex.keytab") }
	withService := func(spn string) *Kerberos { k := good(); k.ServicePrincipal = spn; return k }
	type tcase struct {
		name   string
		zk     string
		krb    *Kerberos
		tls    *tls.Config
		newErr bool   // New itself fails
		want   string // in the error message
		// closes: the cluster closes the connection without a reason
		// (HBase 3 to a client that does not authenticate), which the
		// client retries, as it would a server going down, naming want.
		closes bool
	}
	cases := []tcase{
		{name: "wrong principal", zk: s.ZK, krb: keytabAuth(s, "nosuch", "simdex.keytab"), tls: s.TLSConfig(t, false), want: "nosuch@SIMDEX.TEST"},
		{name: "wrong service principal", zk: s.ZK, krb: withService("hbase/otherhost"), tls: s.TLSConfig(t, false), want: "hbase/otherhost"},
		{name: "missing keytab", zk: s.ZK, krb: keytabAuth(s, "simdex", "missing.keytab"), tls: s.TLSConfig(t, false), newErr: true, want: "missing.keytab"},
		{name: "expired principal", zk: s.ZK, krb: keytabAuth(s, "simdex-expired", "expired.keytab"), tls: s.TLSConfig(t, false), want: "KDC_ERR"},
		{name: "stale keytab", zk: s.ZK, krb: keytabAuth(s, "simdex-stale", "stale.keytab"), tls: s.TLSConfig(t, false), want: "simdex-stale"},
	}
	if s.TLS {
		cases = append(cases, tcase{name: "certificate from another CA", zk: s.ZK, krb: good(), tls: otherCA(t), want: "does not verify"})
	}
	if !s.Offers("authentication") {
		cases = append(cases, tcase{name: "protection the cluster does not offer", zk: s.ZK,
			krb: withProtection(s, ProtectAuthentication, ProtectAuthentication), tls: s.TLSConfig(t, false), want: "the client takes authentication to authentication"})
	}
	if s.Strict {
		cases = append(cases, tcase{name: "cluster requires Kerberos", zk: s.ZK, tls: s.TLSConfig(t, false), want: "require Kerberos",
			closes: strings.HasPrefix(s.Version, "3.")})
		if s.TLS {
			cases = append(cases, tcase{name: "cluster requires TLS", zk: s.ZK, krb: good(), want: "TLS"})
		}
	}
	if plain := hbasetestPlainZK(); plain != "" {
		cases = append(cases,
			tcase{name: "Kerberos to a plain cluster", zk: plain, krb: func() *Kerberos { k := good(); k.ZooKeeperPlain = true; return k }(), want: "does not use Kerberos"},
			tcase{name: "Kerberos to a plain ZooKeeper", zk: plain, krb: good(), want: "no SASL login"},
		)
		if s.TLS {
			cases = append(cases, tcase{name: "TLS to a plaintext cluster", zk: plain, tls: s.TLSConfig(t, false), want: "does not speak TLS"})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{ZooKeeper: []string{tc.zk}, Kerberos: tc.krb, TLS: tc.tls, MaxRetries: 3})
			if tc.newErr {
				if err == nil {
					c.Close()
					t.Fatal("New succeeded")
				}
				if !errors.Is(err, ErrSecurity) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("New: %v; want ErrSecurity naming %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err = c.Namespaces(ctx)
			if err == nil {
				t.Fatal("Namespaces succeeded")
			}
			if tc.closes {
				if !errors.Is(err, ErrConnection) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Namespaces: %v\nwant a connection error naming %q", err, tc.want)
				}
				t.Logf("%v", err)
				return
			}
			if !errors.Is(err, ErrSecurity) || IsRetryable(err) || errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Namespaces: %v\nwant a non-retryable ErrSecurity naming %q", err, tc.want)
			}
			t.Logf("%v", err)
		})
	}
}

// hbasetestPlainZK is the suite's plain HBase (hbasetest.EnvZK), or "".
func hbasetestPlainZK() string { return os.Getenv(hbasetest.EnvZK) }

// TestSecureTicketRenewal runs a client whose tickets live ShortLife (30 s)
// for 2.5 lifetimes, making a request every 250 ms and dropping all its
// connections every 2 s, so that new connections keep needing service
// tickets after the first ones have expired: the client must renew (or
// log in again) before they expire, or a request fails.
func TestSecureTicketRenewal(t *testing.T) {
	s := hbasetest.Secure(t)
	if testing.Short() {
		t.Skip("runs for 2.5 ticket lifetimes")
	}
	c := secureClient(t, s.ZK, keytabAuth(s, "simdex-short", "short.keytab"), s.TLSConfig(t, false))
	ctx := testCtx(t)
	name := createTable(t, c, "renew", []FamilyDescriptor{{Name: "f"}})
	end := time.Now().Add(s.ShortLife * 5 / 2)
	lastDrop := time.Now()
	requests, drops := 0, 0
	for i := 0; time.Now().Before(end); i++ {
		row := fmt.Appendf(nil, "r%d", i)
		if err := c.Put(ctx, name, &Put{Row: row, Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: row}}}); err != nil {
			t.Fatalf("Put %d after %v: %v", i, time.Until(end), err)
		}
		res, err := c.Get(ctx, name, &Get{Row: row})
		if err != nil || len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, row) {
			t.Fatalf("Get %d: %v", i, err)
		}
		requests += 2
		if time.Since(lastDrop) > 2*time.Second {
			c.dropConns()
			lastDrop = time.Now()
			drops++
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%d requests, connections dropped %d times, over %v of %v tickets", requests, drops, s.ShortLife*5/2, s.ShortLife)
}

// dropConns closes every connection of c; the next calls dial anew.
func (c *Client) dropConns() {
	c.mu.Lock()
	conns := c.conns
	c.conns = map[string]*conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.close()
	}
}

// TestSecureJavaPeer: on the secured HBase (Kerberos with privacy, TLS),
// cells this client writes are read back byte for byte by HBase's own Java
// client, logged in as the same principal, and the other way round.
func TestSecureJavaPeer(t *testing.T) {
	s := hbasetest.Secure(t)
	c := secureClient(t, s.ZK, keytabAuth(s, "simdex", "simdex.keytab"), s.TLSConfig(t, true))
	ctx := testCtx(t)
	table := createTable(t, c, "peer", []FamilyDescriptor{{Name: "f"}}, "h")
	rng := mrand.New(mrand.NewPCG(3, 4))
	ts := uint64(time.Now().UnixMilli()) - 60000

	goCells := randomCells(rng, 30, "go", ts)
	var puts []Action
	var rows, want []string
	for _, cl := range goCells {
		puts = append(puts, &Put{Row: cl.Row, Values: []Value{{Family: cl.Family, Qualifier: cl.Qualifier, Value: cl.Value, Timestamp: cl.Timestamp}}})
		rows = append(rows, hex.EncodeToString(cl.Row))
		want = append(want, cellLine(cl))
	}
	mustMulti(t, ctx, c, table, puts)
	got := strings.Split(strings.TrimSpace(s.Peer(t, strings.Join(rows, "\n"), "read", s.ZK, table)), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Java read back %d cells, differing from the %d Go wrote", len(got), len(want))
	}

	javaCells := randomCells(rng, 30, "java", ts)
	s.Peer(t, peerWriteInput(javaCells), "write", s.ZK, table)
	checkGets(t, ctx, c, table, javaCells)
}

// TestSecureBulkLoad imports an HFile through PrepareBulkLoad,
// BulkLoadHFile and CleanupBulkLoad on the secured HBase, where the region
// server runs the secure bulk load as the Kerberos caller.
func TestSecureBulkLoad(t *testing.T) {
	s := hbasetest.Secure(t)
	c := secureClient(t, s.ZK, keytabAuth(s, "simdex", "simdex.keytab"), s.TLSConfig(t, false))
	ctx := testCtx(t)
	table := createTable(t, c, "bulk", []FamilyDescriptor{{Name: "f"}}, "g")
	token, err := c.PrepareBulkLoad(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Add(-time.Hour).UnixMilli()
	cells := []hfile.Cell{hcell("h1", "q", ts, "v1"), hcell("k2", "q", ts+1, "v2")}
	path := writeHFile(t, t.TempDir(), "h", cells)
	// The region server checks the files as the Kerberos caller (simdex),
	// who does not own them here: on HDFS the caller writes them itself.
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := c.BulkLoadHFiles(ctx, table, cells[0].Row, cells[1].Row, []FamilyPath{{Family: []byte("f"), Path: path}}, token); err != nil {
		t.Fatalf("BulkLoadHFiles: %v", err)
	}
	for _, want := range cells {
		res, err := c.Get(ctx, table, &Get{Row: want.Row})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, want.Value) || res.Cells[0].Timestamp != uint64(want.Timestamp) {
			t.Fatalf("row %s: %+v, want %q at %d", want.Row, res.Cells, want.Value, want.Timestamp)
		}
	}
	// A file the caller may not write is refused: the region server
	// checks it as simdex, not as itself.
	theirs := writeHFile(t, t.TempDir(), "theirs", []hfile.Cell{hcell("m1", "q", ts, "x")})
	patient := secureClient(t, s.ZK, keytabAuth(s, "simdex", "simdex.keytab"), s.TLSConfig(t, false))
	patient.cfg.MaxRetries, patient.cfg.MaxBackoff = maxRefusals+2, 100*time.Millisecond
	err = patient.BulkLoadHFiles(ctx, table, []byte("m1"), []byte("m1"), []FamilyPath{{Family: []byte("f"), Path: theirs}}, token)
	if !errors.Is(err, ErrBulkLoadUnreadable) {
		t.Fatalf("a file simdex may not write: %v, want ErrBulkLoadUnreadable", err)
	}
	if err := c.CleanupBulkLoad(ctx, table, token); err != nil {
		t.Fatal(err)
	}
}

// TestSecureTicketCache: a client given kinit's ticket cache instead of a
// keytab reads and writes on the secured HBase.
func TestSecureTicketCache(t *testing.T) {
	s := hbasetest.Secure(t)
	kinit, err := exec.LookPath("kinit")
	if err != nil {
		t.Skip("kinit not installed (Debian's krb5-user)")
	}
	cc := filepath.Join(t.TempDir(), "ccache")
	cmd := exec.Command(kinit, "-k", "-t", s.Path("simdex.keytab"), "-c", "FILE:"+cc, hbasetest.Principal("simdex"))
	cmd.Env = append(os.Environ(), "KRB5_CONFIG="+s.Krb5Conf())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v\n%s", err, out)
	}
	c := secureClient(t, s.ZK, &Kerberos{CCache: cc, Krb5Conf: s.Krb5Conf()}, s.TLSConfig(t, false))
	roundTrip(t, c)
}
