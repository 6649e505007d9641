package ctl

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage"
)

// TestSecureSchemaVerbs: simdexctl schema create, verify and drop on the
// secured HBase, configured as an admin would: Kerberos through SIMDEX_*
// variables, TLS through the config file, the namespace by flag.
func TestSecureSchemaVerbs(t *testing.T) {
	s := hbasetest.Secure(t)
	ns := hbasetest.Namespace("sctl")
	vars := map[string]string{
		"SIMDEX_HBASE_KERBEROS_PRINCIPAL": hbasetest.Principal("simdex"),
		"SIMDEX_HBASE_KERBEROS_KEYTAB":    s.Path("simdex.keytab"),
		"SIMDEX_HBASE_KRB5_CONF":          s.Krb5Conf(),
	}
	file := writeFile(t, "simdex.json", fmt.Sprintf(`{"hbase_zk": %q, "hbase_tls": %t, "hbase_tls_ca": %q}`, s.ZK, s.TLS, s.TLSPath("ca.pem")))
	flags := []string{"--config", file, "--hbase-namespace", ns}
	runSecure := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, NewFingerprinter: sharedFP, Getenv: func(k string) string { return vars[k] }}
		code := Run(context.Background(), env, append(args, flags...))
		return code, out.String(), errb.String()
	}
	t.Cleanup(func() { runSecure("schema", "drop", "--yes") })
	if code, out, errs := runSecure("schema", "create"); code != 0 || strings.Count(out, "created ") != len(storage.Tables) {
		t.Fatalf("create: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runSecure("schema", "verify"); code != 0 || !strings.Contains(out, "ok:") {
		t.Fatalf("verify: %d\n%s%s", code, out, errs)
	}
	if s.Authorization {
		checkSecureGrant(t, s, ns, runSecure)
	}
	// Without the keytab the cluster refuses, and the command says why.
	delete(vars, "SIMDEX_HBASE_KERBEROS_KEYTAB")
	delete(vars, "SIMDEX_HBASE_KERBEROS_PRINCIPAL")
	if s.Strict {
		if code, out, errs := runSecure("schema", "verify"); code == 0 || !strings.Contains(errs, "require Kerberos") {
			t.Fatalf("verify without Kerberos: %d\n%s%s", code, out, errs)
		}
	}
	vars["SIMDEX_HBASE_KERBEROS_PRINCIPAL"] = hbasetest.Principal("simdex")
	vars["SIMDEX_HBASE_KERBEROS_KEYTAB"] = s.Path("simdex.keytab")
	if code, out, errs := runSecure("schema", "drop", "--yes"); code != 0 {
		t.Fatalf("drop: %d\n%s%s", code, out, errs)
	}
}

// checkSecureGrant: schema grant gives a server's principal its role's
// permissions on the namespace and revoke takes them away, as the owner's
// client reads them back from HBase.
func checkSecureGrant(t *testing.T, s *hbasetest.SecureCluster, ns string, run func(...string) (int, string, string)) {
	t.Helper()
	const user = "simdex-server"
	tc, err := hbase.TLSFiles{Enabled: s.TLS, CA: s.TLSPath("ca.pem")}.Config()
	if err != nil {
		t.Fatal(err)
	}
	c, err := hbase.New(hbase.Config{ZooKeeper: []string{s.ZK}, TLS: tc,
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal("simdex"), Keytab: s.Path("simdex.keytab"), Krb5Conf: s.Krb5Conf()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held := func() []string {
		t.Helper()
		var out []string
		for _, scope := range [][2]string{{ns, ""}, {"", ns + ":index"}, {"", ns + ":seen"}} {
			perms, err := c.Permissions(ctx, user, scope[0], scope[1])
			if err != nil {
				t.Fatalf("Permissions %v: %v", scope, err)
			}
			for _, p := range perms {
				out = append(out, p.String())
			}
		}
		return out
	}
	verify := func(want string) {
		t.Helper()
		code, out, errs := run("schema", "verify", "--user", user)
		if (code == 0) != strings.HasPrefix(want, "ok:") || !strings.Contains(out, want) {
			t.Errorf("verify --user %s: %d\n%s%s\nwant %q", user, code, out, errs, want)
		}
	}
	verify("missing grant: " + user + " RW on namespace " + ns)
	// ADMIN does what the role needs CREATE for: verify accepts it.
	byAdmin := []hbase.Permission{{User: user, Namespace: ns, Rights: []hbase.Right{hbase.RightRead, hbase.RightWrite}},
		{User: user, Table: ns + ":index", Rights: []hbase.Right{hbase.RightAdmin}}, {User: user, Table: ns + ":seen", Rights: []hbase.Right{hbase.RightAdmin}}}
	for _, p := range byAdmin {
		if err := c.Grant(ctx, p); err != nil {
			t.Fatalf("grant %s: %v", p, err)
		}
	}
	verify("ok: " + user + " holds what role server needs")
	for _, p := range byAdmin {
		if err := c.Revoke(ctx, p); err != nil {
			t.Fatalf("revoke %s: %v", p, err)
		}
	}
	code, out, errs := run("schema", "grant", "--user", user)
	want := []string{user + " RW on namespace " + ns, user + " C on table " + ns + ":index", user + " C on table " + ns + ":seen"}
	if code != 0 || strings.Count(out, "granted ") != len(want) {
		t.Fatalf("grant: %d\n%s%s", code, out, errs)
	}
	if got := held(); !slices.Equal(got, want) {
		t.Errorf("after grant the user holds %q, want %q", got, want)
	}
	verify("ok: " + user + " holds what role server needs")
	if code, out, errs := run("schema", "revoke", "--user", "simdex-server", "--keep-store-history"); code != 0 || strings.Count(out, "revoked ") != 1 {
		t.Fatalf("revoke --keep-store-history: %d\n%s%s", code, out, errs)
	}
	verify("missing grant: " + user + " RW on namespace " + ns)
	if code, out, errs := run("schema", "revoke", "--user", user); code != 0 || strings.Count(out, "revoked ") != len(want) {
		t.Fatalf("revoke: %d\n%s%s", code, out, errs)
	}
	if got := held(); len(got) != 0 {
		t.Errorf("after revoke the user holds %q, want nothing", got)
	}
}
