package ctl

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

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
	file := writeFile(t, "simdex.json", fmt.Sprintf(`{"hbase_zk": %q, "hbase_tls": true, "hbase_tls_ca": %q}`, s.ZK, s.Path("ca.pem")))
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
