package ctl

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseWith runs a verb's parse as Run would, with the environment env.
func parseWith[C any](t *testing.T, verb string, parse func(*Env, []string) (C, error), env map[string]string, args ...string) (C, string, error) {
	t.Helper()
	var stderr bytes.Buffer
	e := &Env{Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	for _, v := range Verbs() {
		if v.Name == verb {
			e.verb = v
		}
	}
	c, err := parse(e, args)
	return c, stderr.String(), err
}

// TestStoreSettings: the store settings of simdexctl's verbs come from the
// flag, else SIMDEX_<FLAG>, else the config file, else the default; a
// verb's other flags only from the command line.
func TestStoreSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "simdex.json")
	if err := os.WriteFile(file, []byte(`{"hbase_zk": "file:2181", "hbase_namespace": "from_file"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		zk, ns string
	}{
		{"defaults", nil, []string{"verify", "--hbase-zk", "a:1"}, "a:1", "simdex"},
		{"env", map[string]string{"SIMDEX_HBASE_ZK": "env:1", "SIMDEX_HBASE_NAMESPACE": "env_ns"}, []string{"verify"}, "env:1", "env_ns"},
		{"file", map[string]string{"SIMDEX_CONFIG": file}, []string{"verify"}, "file:2181", "from_file"},
		{"env over file", map[string]string{"SIMDEX_CONFIG": file, "SIMDEX_HBASE_NAMESPACE": "env_ns"}, []string{"verify"}, "file:2181", "env_ns"},
		{"flag over env", map[string]string{"SIMDEX_HBASE_ZK": "env:1"}, []string{"verify", "--hbase-zk", "flag:1", "--config", file}, "flag:1", "from_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := parseWith(t, "schema", parseSchema, tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.HBaseZK != tt.zk || c.HBaseNamespace != tt.ns {
				t.Errorf("zk %q namespace %q, want %q %q", c.HBaseZK, c.HBaseNamespace, tt.zk, tt.ns)
			}
		})
	}

	// Verb-local flags: no variable, no file key.
	c, _, err := parseWith(t, "schema", parseSchema, map[string]string{"SIMDEX_RETENTION": "1h", "SIMDEX_YES": "true", "SIMDEX_HBASE_ZK": "a:1"}, "verify")
	if err != nil || c.Retention != 0 || c.Yes {
		t.Errorf("local flags from the environment: %+v %v", c, err)
	}
	local := filepath.Join(t.TempDir(), "local.json")
	os.WriteFile(local, []byte(`{"retention": "1h"}`), 0o644)
	if _, _, err := parseWith(t, "schema", parseSchema, nil, "verify", "--hbase-zk", "a:1", "--config", local); !errors.Is(err, ErrUsage) ||
		!strings.Contains(err.Error(), `option "retention" is given on the command line only`) {
		t.Errorf("local flag in the file: %v", err)
	}
	if _, _, err := parseWith(t, "fingerprint", parseFingerprint, nil, "--config", local); !errors.Is(err, ErrUsage) {
		t.Errorf("--config of a verb without settings: %v", err)
	}
	cc, _, err := parseWith(t, "compact", parseCompact, map[string]string{"SIMDEX_DATA_DIR": "/data", "SIMDEX_RETENTION": "1h"})
	if err != nil || cc.DataDir != "/data" || cc.Retention != 0 {
		t.Errorf("compact from the environment: %+v %v", cc, err)
	}
}

// TestSeenStore: seen takes one store; when the data directory and the
// quorum come from different sources the stronger one chooses it, from the
// same source both are an error.
func TestSeenStore(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		dir, zk string
		err     string
	}{
		{"dir flag over zk env", map[string]string{"SIMDEX_HBASE_ZK": "a:1"}, []string{"stats", "--data-dir", "d"}, "d", "", ""},
		{"zk flag over dir env", map[string]string{"SIMDEX_DATA_DIR": "d"}, []string{"stats", "--hbase-zk", "a:1"}, "", "a:1", ""},
		{"both flags", nil, []string{"stats", "--hbase-zk", "a:1", "--data-dir", "d"}, "", "", "exactly one of --data-dir and --hbase-zk"},
		{"both env", map[string]string{"SIMDEX_DATA_DIR": "d", "SIMDEX_HBASE_ZK": "a:1"}, []string{"fold"}, "", "", "exactly one of --data-dir and --hbase-zk"},
		{"none", nil, []string{"stats"}, "", "", "exactly one of --data-dir and --hbase-zk"},
		{"zk without port", nil, []string{"stats", "--hbase-zk", "zkhost"}, "", "", "no port"},
		{"bad command", nil, []string{"count", "--data-dir", "d"}, "", "", "want stats or fold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := parseWith(t, "seen", parseSeen, tt.env, tt.args...)
			if tt.err != "" {
				if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want ErrUsage saying %q", err, tt.err)
				}
				return
			}
			if err != nil || c.DataDir != tt.dir || c.HBaseZK != tt.zk {
				t.Errorf("dir %q zk %q (%v), want %q %q", c.DataDir, c.HBaseZK, err, tt.dir, tt.zk)
			}
		})
	}
}

// TestVerbHelp: a verb's --help has the layout of every command's: its
// usage line, its summary, where the store settings come from, the flags;
// it exits 0.
func TestVerbHelp(t *testing.T) {
	for _, v := range Verbs() {
		code, _, stderr := run(t, "", v.Name, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d", v.Name, code)
		}
		if !strings.HasPrefix(stderr, "Usage: simdexctl "+v.Name+" "+v.Usage+"\n\n") || !strings.Contains(stderr, "\nFlags:\n  -") {
			t.Errorf("%s --help:\n%s", v.Name, stderr)
		}
		hasStore := strings.Contains(stderr, "  -data-dir ") || strings.Contains(stderr, "  -hbase-zk ")
		if hasStore != strings.Contains(stderr, "SIMDEX_<FLAG>") || hasStore != strings.Contains(stderr, "  -config ") {
			t.Errorf("%s --help: store flags %v, but the environment paragraph and --config do not follow:\n%s", v.Name, hasStore, stderr)
		}
	}
	var stderr bytes.Buffer
	err := seenVerb.Run(context.Background(), &Env{Stderr: &stderr, verb: seenVerb}, []string{"-h"})
	want := "The flags --data-dir, --hbase-kerberos-ccache, --hbase-kerberos-keytab, --hbase-kerberos-principal, --hbase-kerberos-service, --hbase-krb5-conf, " +
		"--hbase-namespace, --hbase-rpc-protection, --hbase-tls, --hbase-tls-ca, --hbase-tls-cert, --hbase-tls-key, --hbase-tls-server-name, --hbase-zk, --hbase-zk-kerberos-service and --hbase-zk-sasl can also be set"
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(strings.Join(strings.Fields(stderr.String()), " "), want) {
		t.Errorf("seen -h: %v\n%s", err, stderr.String())
	}
}

// TestSchemaGrantArgs: grant and revoke want a user and a known role (as
// verify does when given a user), and --keep-store-history leaves out the
// CREATE the store compaction needs.
func TestSchemaGrantArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		perms int // 0: a usage error
	}{
		{[]string{"grant", "--user", "svc"}, 3},
		{[]string{"revoke", "--user", "svc", "--keep-store-history"}, 1},
		{[]string{"grant", "--user", "svc", "--role", "server"}, 3},
		{[]string{"grant", "--user", "etl", "--role", "loader"}, 5},
		{[]string{"verify", "--user", "svc"}, 3},
		{[]string{"verify", "--user", "svc", "--role", "reader"}, 0},
		{[]string{"grant"}, 0},
		{[]string{"revoke", "--user", "svc", "--role", "admin"}, 0},
	} {
		c, _, err := parseWith(t, "schema", parseSchema, nil, append(tc.args, "--hbase-zk", "a:1")...)
		if tc.perms == 0 {
			if !errors.Is(err, ErrUsage) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if perms, err := c.grants(); err != nil || len(perms) != tc.perms {
			t.Errorf("%q: grants %v, %v; want %d", tc.args, perms, err, tc.perms)
		}
	}
}
