package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
)

// secureHBase sets cfg's HBase security as an admin would for the secured
// HBase: TLS with the cluster's CA, Kerberos as simdex with its keytab.
func secureHBase(s *hbasetest.SecureCluster) func(*Config) {
	return secureHBaseAs(s, "simdex", "simdex.keytab")
}

// secureHBaseAs is secureHBase as another principal of the secured HBase.
func secureHBaseAs(s *hbasetest.SecureCluster, user, keytab string) func(*Config) {
	return func(cfg *Config) {
		cfg.HBaseTLS, cfg.HBaseTLSCA = s.TLS, s.TLSPath("ca.pem")
		cfg.HBaseKerberosPrincipal, cfg.HBaseKerberosKeytab = hbasetest.Principal(user), s.Path(keytab)
		cfg.HBaseKrb5Conf, cfg.HBaseRPCProtection = s.Krb5Conf(), "privacy"
	}
}

// secureClient connects to the secured HBase as user, with its keytab.
func secureClient(s *hbasetest.SecureCluster, user, keytab string) (*hbase.Client, error) {
	tc, err := hbase.TLSFiles{Enabled: s.TLS, CA: s.TLSPath("ca.pem")}.Config()
	if err != nil {
		return nil, err
	}
	return hbase.New(hbase.Config{ZooKeeper: []string{s.ZK}, TLS: tc,
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal(user), Keytab: s.Path(keytab), Krb5Conf: s.Krb5Conf()}})
}

// TestSecureHBaseServer: the whole server on the secured HBase (Kerberos
// with privacy, TLS): insert, check, delete, and a restart that finds the
// data.
func TestSecureHBaseServer(t *testing.T) {
	s := hbasetest.Secure(t)
	ns := hbaseNamespaceWith(t, "ssrv", func() (*hbase.Client, error) { return secureClient(s, "simdex", "simdex.keytab") })
	srv := startHBaseServerWith(t, s.ZK, ns, true, secureHBase(s))
	text := readText(t, "en_article.txt")
	if st, b := srv.do(t, "POST", "/v1/documents", map[string]any{"id": "a1", "text": text}); st != http.StatusCreated {
		t.Fatalf("insert: %d %s", st, b)
	}
	if st, b := srv.do(t, "POST", "/v1/documents", map[string]any{"id": "gone", "text": readText(t, "zh_article.txt")}); st != http.StatusCreated {
		t.Fatalf("insert: %d %s", st, b)
	}
	var chk checkResponse
	st, b := srv.do(t, "POST", "/v1/check", map[string]any{"text": lightEdit(text)})
	if err := json.Unmarshal(b, &chk); err != nil || st != 200 || !chk.Duplicate || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != "a1" {
		t.Fatalf("check edited copy: %d %s", st, b)
	}
	if st, b := srv.do(t, "DELETE", "/v1/documents/gone", nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d %s", st, b)
	}
	if err := srv.stop(); err != nil {
		t.Fatalf("server stop: %v", err)
	}
	srv = startHBaseServerWith(t, s.ZK, ns, false, secureHBase(s))
	srv.checkAfterRestart(t, text)
}

// TestSecureHBaseServerRefuses: a server not given the cluster's security
// refuses to start, saying what is missing.
func TestSecureHBaseServerRefuses(t *testing.T) {
	s := hbasetest.Secure(t)
	if !s.Strict {
		t.Skip("the secured HBase accepts plain clients (SIMDEX_HBASE_SECURE_STRICT=0)")
	}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no Kerberos", func(cfg *Config) {
			secureHBase(s)(cfg)
			cfg.HBaseKerberosKeytab, cfg.HBaseKerberosPrincipal, cfg.HBaseRPCProtection = "", "", ""
		}, "require Kerberos"},
		{"no TLS", func(cfg *Config) { secureHBase(s)(cfg); cfg.HBaseTLS, cfg.HBaseTLSCA = false, "" }, "TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "no TLS" {
				s.NeedTLS(t)
			}
			cfg := DefaultConfig()
			cfg.Addr, cfg.LogLevel = "127.0.0.1:0", "warn"
			cfg.Store, cfg.HBaseZK, cfg.HBaseNamespace = "hbase", s.ZK, "never_created_secure"
			tc.mod(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			err := Run(ctx, cfg, io.Discard, nil)
			t.Logf("%v", err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
