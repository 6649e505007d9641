package hbasetest

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The secured HBase of scripts/hbase/secure.sh, named by the variables its
// secure.env exports.
const (
	// EnvSecureZK is its ZooKeeper address.
	EnvSecureZK = "SIMDEX_SECURE_ZK"
	// EnvSecureDir is its directory (keytabs, krb5.conf, certificates).
	EnvSecureDir = "SIMDEX_SECURE_DIR"
	// EnvSecureStrict is 1 when it requires Kerberos and TLS.
	EnvSecureStrict = "SIMDEX_SECURE_STRICT"
	// EnvSecureRequired, when 1, fails (rather than skips) a secured test
	// without a secured HBase: scripts/test.sh's secured section sets it.
	EnvSecureRequired = "SIMDEX_SECURE_REQUIRED"
	// EnvSecureShortLife is the ticket lifetime of simdex-short, seconds.
	EnvSecureShortLife = "SIMDEX_SECURE_SHORT_LIFE"
	// EnvSecureProtection is its hbase.rpc.protection (a list).
	EnvSecureProtection = "SIMDEX_SECURE_PROTECTION"
	// EnvSecureZKSASL is its ZooKeeper's SASL: required, optional or off.
	EnvSecureZKSASL = "SIMDEX_SECURE_ZK_SASL"
	// EnvSecureAuthorization is 1 when it checks permissions (the
	// AccessController; simdex and simdex-short superusers).
	EnvSecureAuthorization = "SIMDEX_SECURE_AUTHORIZATION"
	// EnvSecureVersion is its HBase version (SIMDEX_HBASE_VERSION).
	EnvSecureVersion = "SIMDEX_SECURE_HBASE_VERSION"
	// EnvSecureTLS is 0 when its RPC ports have no TLS (HBase 2.5, which
	// has none): Kerberos alone.
	EnvSecureTLS = "SIMDEX_SECURE_TLS"
)

// Realm is the Kerberos realm of the secured HBase.
const Realm = "SIMDEX.TEST"

// SecureCluster is the secured HBase the tests use.
type SecureCluster struct {
	// ZK is its ZooKeeper address.
	ZK string
	// Dir holds its krb5.conf, keytabs and certificates.
	Dir string
	// Strict is true when it requires Kerberos and, with TLS, TLS (no
	// SIMPLE clients, no plaintext).
	Strict bool
	// Version is its HBase version, e.g. "2.6.4" (the default when
	// secure.env does not say).
	Version string
	// TLS is true when its RPC ports speak TLS (every version from 2.6
	// on); false for Kerberos alone.
	TLS bool
	// ShortLife is the ticket lifetime of simdex-short (short.keytab).
	ShortLife time.Duration
	// Protection is its hbase.rpc.protection: the qualities of
	// protection it offers, e.g. "privacy" or
	// "privacy,integrity,authentication".
	Protection string
	// ZKSASL is its ZooKeeper's SASL: "required" (a client must
	// authenticate by SASL GSSAPI as zookeeper/localhost), "optional"
	// (it may) or "off" (no SASL login: it cannot).
	ZKSASL string
	// Authorization is true when it checks permissions: simdex and
	// simdex-short are superusers, simdex-reader (reader.keytab) is
	// granted nothing.
	Authorization bool
}

// ZKRequiresSASL reports whether the cluster's ZooKeeper refuses clients
// that do not authenticate by SASL.
func (s *SecureCluster) ZKRequiresSASL() bool { return s.ZKSASL == "required" }

// Offers reports whether the cluster offers the quality of protection
// named by HBase's name p (authentication, integrity, privacy).
func (s *SecureCluster) Offers(p string) bool {
	for _, q := range strings.Split(s.Protection, ",") {
		if strings.TrimSpace(q) == p {
			return true
		}
	}
	return false
}

// Secure returns the secured HBase, or ends the test: skipped without one,
// failed when EnvSecureRequired is 1.
func Secure(t testing.TB) *SecureCluster {
	t.Helper()
	zk, dir := os.Getenv(EnvSecureZK), os.Getenv(EnvSecureDir)
	if zk == "" || dir == "" {
		msg := "hbasetest: " + EnvSecureZK + " and " + EnvSecureDir + " are unset: start a secured HBase with scripts/hbase/secure.sh start and source its secure.env"
		if os.Getenv(EnvSecureRequired) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	life, err := strconv.Atoi(os.Getenv(EnvSecureShortLife))
	if err != nil {
		t.Fatalf("hbasetest: %s: %v", EnvSecureShortLife, err)
	}
	sc := &SecureCluster{ZK: zk, Dir: dir, Strict: os.Getenv(EnvSecureStrict) == "1", ShortLife: time.Duration(life) * time.Second,
		Protection: os.Getenv(EnvSecureProtection), ZKSASL: os.Getenv(EnvSecureZKSASL),
		Authorization: os.Getenv(EnvSecureAuthorization) == "1", TLS: os.Getenv(EnvSecureTLS) != "0", Version: os.Getenv(EnvSecureVersion)}
	if sc.Version == "" {
		sc.Version = "2.6.4"
	}
	if sc.ZKSASL == "" {
		sc.ZKSASL = "off" // a secure.env from before ZooKeeper had SASL
	}
	return sc
}

// TLSPath is Path(name) for a TLS file (CA, client certificate or key),
// and "" when the cluster has no TLS, so that a client configured with it
// dials without TLS.
func (s *SecureCluster) TLSPath(name string) string {
	if !s.TLS {
		return ""
	}
	return s.Path(name)
}

// NeedTLS skips a test of TLS itself on a cluster without it.
func (s *SecureCluster) NeedTLS(t testing.TB) {
	t.Helper()
	if !s.TLS {
		t.Skip("the secured HBase has no TLS (SIMDEX_SECURE_TLS=0: HBase 2.5, or SIMDEX_HBASE_SECURE_TLS=0)")
	}
}

// Path is the file name in the cluster's directory.
func (s *SecureCluster) Path(name string) string { return filepath.Join(s.Dir, name) }

// Krb5Conf is the krb5.conf naming the cluster's KDC.
func (s *SecureCluster) Krb5Conf() string { return s.Path("krb5.conf") }

// Principal is user@Realm.
func Principal(user string) string { return user + "@" + Realm }

// TLSConfig is a client TLS configuration trusting the cluster's CA, with
// the client certificate when withCert; nil (no TLS) when the cluster has
// none.
func (s *SecureCluster) TLSConfig(t testing.TB, withCert bool) *tls.Config {
	t.Helper()
	if !s.TLS {
		return nil
	}
	pem, err := os.ReadFile(s.Path("ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("hbasetest: no certificate in ca.pem")
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withCert {
		cert, err := tls.LoadX509KeyPair(s.Path("client.pem"), s.Path("client-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// Peer runs the Java reference peer (as hbasetest.Peer) as simdex@Realm
// with the client certificate: the client configuration secure.sh wrote.
func (s *SecureCluster) Peer(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	cmd := installedTool(t, "the Java reference peer", "peer.sh", args...)
	opts := "-Djava.security.krb5.conf=" + s.Krb5Conf() + " -Dsun.security.krb5.disableReferrals=true"
	if s.ZKSASL != "off" {
		// ZooKeeper's Java client logs in with the JAAS Client section.
		opts += " -Djava.security.auth.login.config=" + s.Path("client-conf/jaas.conf") +
			" -Dzookeeper.server.principal=zookeeper/localhost@" + Realm
	}
	cmd.Env = append(cmd.Env, "SIMDEX_HBASE_PEER_CONF="+s.Path("client-conf"), "SIMDEX_HBASE_PEER_JAVA_OPTS="+opts)
	return runPeer(t, cmd, stdin, "secured peer", args)
}

// Grantee is the secured HBase's principal that is no superuser and owns
// nothing: tests grant it rights on tables and namespaces of their own.
const Grantee = "simdex-server"

// GranteeKeytab is Grantee's keytab in the secured HBase's directory.
const GranteeKeytab = "server.keytab"

// PermissionWait bounds how long Eventually waits: region servers apply a
// grant or a revoke when ZooKeeper tells them, a moment after the master
// wrote it, and answer by the old permissions meanwhile.
const PermissionWait = 30 * time.Second

// Eventually calls call until it returns nil, every 200 ms for at most
// PermissionWait. An error that pending does not accept (the refusal the
// old permissions give) fails the test at once, as does the wait running
// out.
func Eventually(t testing.TB, what string, call func() error, pending func(error) bool) {
	t.Helper()
	deadline := time.Now().Add(PermissionWait)
	for {
		err := call()
		if err == nil {
			return
		}
		if !pending(err) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
