package config

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/simdex/simdex/storage/hbasestore"
)

// TestHBaseFlags: the HBase flags, their variables and file keys, as every
// command declares them.
func TestHBaseFlags(t *testing.T) {
	file := writeConfig(t, `{"hbase_zk": "f1:2181", "hbase_namespace": "from_file"}`)
	secFile := writeConfig(t, `{"hbase_tls": true, "hbase_kerberos_principal": "u@R", "hbase_kerberos_keytab": "/k", "hbase_zk_sasl": false}`)
	def := func(h HBase) HBase {
		h.HBaseKerberosService, h.HBaseZKSASL, h.HBaseZKKerberosService = "hbase/_HOST", true, "zookeeper/_HOST"
		return h
	}
	tests := []struct {
		name    string
		refusal string
		args    []string
		env     map[string]string
		want    HBase
	}{
		{"defaults", "else refuse", nil, nil, def(HBase{HBaseNamespace: "simdex"})},
		{"flags", "else refuse", []string{"--hbase-zk", "a:1,b:2", "--hbase-namespace", "ns", "--hbase-create-tables"}, nil, def(HBase{HBaseZK: "a:1,b:2", HBaseNamespace: "ns", HBaseCreateTables: true})},
		{"env", "else refuse", nil, map[string]string{"SIMDEX_HBASE_ZK": "e:1", "SIMDEX_HBASE_NAMESPACE": "ens", "SIMDEX_HBASE_CREATE_TABLES": "true"}, def(HBase{HBaseZK: "e:1", HBaseNamespace: "ens", HBaseCreateTables: true})},
		{"file under env", "", []string{"--config", file}, map[string]string{"SIMDEX_HBASE_ZK": "e:1"}, def(HBase{HBaseZK: "e:1", HBaseNamespace: "from_file"})},
		{"security flags", "", []string{"--hbase-tls", "--hbase-tls-ca", "ca.pem", "--hbase-tls-cert", "c.pem", "--hbase-tls-key", "k.pem", "--hbase-tls-server-name", "hb",
			"--hbase-kerberos-principal", "u@R", "--hbase-kerberos-keytab", "u.keytab", "--hbase-krb5-conf", "k.conf", "--hbase-kerberos-service", "hb/_HOST@R", "--hbase-rpc-protection", "privacy",
			"--hbase-zk-sasl=false", "--hbase-zk-kerberos-service", "zk/_HOST@R"}, nil,
			HBase{HBaseNamespace: "simdex", HBaseTLS: true, HBaseTLSCA: "ca.pem", HBaseTLSCert: "c.pem", HBaseTLSKey: "k.pem", HBaseTLSServerName: "hb",
				HBaseKerberosPrincipal: "u@R", HBaseKerberosKeytab: "u.keytab", HBaseKrb5Conf: "k.conf", HBaseKerberosService: "hb/_HOST@R", HBaseRPCProtection: "privacy",
				HBaseZKKerberosService: "zk/_HOST@R"}},
		{"security env", "", nil, map[string]string{"SIMDEX_HBASE_TLS": "true", "SIMDEX_HBASE_TLS_CA": "ca.pem", "SIMDEX_HBASE_KERBEROS_CCACHE": "/tmp/cc", "SIMDEX_HBASE_RPC_PROTECTION": "integrity",
			"SIMDEX_HBASE_ZK_KERBEROS_SERVICE": "zk/_HOST"},
			func() HBase {
				h := def(HBase{HBaseNamespace: "simdex", HBaseTLS: true, HBaseTLSCA: "ca.pem", HBaseKerberosCCache: "/tmp/cc", HBaseRPCProtection: "integrity"})
				h.HBaseZKKerberosService = "zk/_HOST"
				return h
			}()},
		{"security file", "", []string{"--config", secFile}, nil,
			func() HBase {
				h := def(HBase{HBaseNamespace: "simdex", HBaseTLS: true, HBaseKerberosPrincipal: "u@R", HBaseKerberosKeytab: "/k"})
				h.HBaseZKSASL = false
				return h
			}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultHBase()
			s := NewSet("tool", errTest, io.Discard, Usage{})
			got.HBaseFlags(s.Flags(), "with --store hbase: ", tt.refusal)
			if err := s.Parse(tt.args, getenv(tt.env)); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%+v, want %+v", got, tt.want)
			}
			if (s.Flags().Lookup("hbase-create-tables") != nil) != (tt.refusal != "") {
				t.Errorf("--hbase-create-tables declared: %v, refusal %q", s.Flags().Lookup("hbase-create-tables") != nil, tt.refusal)
			}
		})
	}
	var h HBase
	s := NewSet("tool", errTest, io.Discard, Usage{})
	h.HBaseFlags(s.Flags(), "with --store hbase: ", "else refuse to start")
	for name, usage := range map[string]string{
		"hbase-zk":            "with --store hbase: ZooKeeper quorum of HBase, host:port[,host:port...]",
		"hbase-namespace":     "with --store hbase: namespace of the simdex tables",
		"hbase-create-tables": "with --store hbase: create missing tables with the default schema (else refuse to start)",
	} {
		if got := s.Flags().Lookup(name).Usage; got != usage {
			t.Errorf("-%s usage %q, want %q", name, got, usage)
		}
	}
}

func TestHBaseValidate(t *testing.T) {
	tests := []struct {
		h    HBase
		want string
	}{
		{HBase{HBaseZK: "127.0.0.1:2181,127.0.0.2:2181", HBaseNamespace: "simdex"}, ""},
		{HBase{HBaseZK: " h:1 , ", HBaseNamespace: ""}, ""},
		{HBase{HBaseNamespace: "simdex"}, "--store hbase needs --hbase-zk (SIMDEX_HBASE_ZK): the ZooKeeper quorum, host:port[,host:port...]"},
		{HBase{HBaseZK: " , ", HBaseNamespace: "simdex"}, "needs --hbase-zk"},
		{HBase{HBaseZK: "zkhost", HBaseNamespace: "simdex"}, `ZooKeeper address "zkhost" has no port`},
		{HBase{HBaseZK: "h:1", HBaseNamespace: "a:b"}, `namespace "a:b"`},
		{HBase{HBaseZK: "h:1", HBaseKerberosKeytab: "/k", HBaseKerberosPrincipal: "u@R", HBaseRPCProtection: "secret"}, `protection "secret"`},
		{HBase{HBaseZK: "h:1", HBaseKerberosPrincipal: "u@R"}, "need --hbase-kerberos-keytab or --hbase-kerberos-ccache"},
		{HBase{HBaseZK: "h:1", HBaseKerberosKeytab: "/k", HBaseKerberosPrincipal: "u"}, `principal "u": want user@REALM`},
		{HBase{HBaseZK: "h:1", HBaseKerberosKeytab: "/k", HBaseKerberosPrincipal: "u@R", HBaseKerberosService: "hbase"}, `service principal "hbase"`},
		{HBase{HBaseZK: "h:1", HBaseKerberosKeytab: "/k", HBaseKerberosPrincipal: "u@R", HBaseKerberosService: "hbase/_HOST", HBaseZKKerberosService: "zookeeper"}, `ZooKeeper principal "zookeeper"`},
		{HBase{HBaseZK: "h:1", HBaseTLSCA: "/ca.pem"}, "TLS not enabled"},
		{HBase{HBaseZK: "h:1", HBaseTLS: true, HBaseTLSCert: "/c.pem"}, "certificate and key go together"},
		{HBase{HBaseZK: "h:1", HBaseTLS: true, HBaseTLSCA: "/nonexistent/ca.pem"}, "nonexistent/ca.pem"},
		{HBase{HBaseZK: "h:1", HBaseTLS: true, HBaseKerberosKeytab: "/k", HBaseKerberosPrincipal: "u@R", HBaseRPCProtection: "privacy"}, ""},
	}
	for _, tt := range tests {
		err := tt.h.ValidateHBase("--store hbase")
		if tt.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.h, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one saying %q", tt.h, err, tt.want)
		}
	}
	if err := (HBase{HBaseZK: "zkhost"}).ValidateHBase("x"); !errors.Is(err, hbasestore.ErrConfig) {
		t.Errorf("bad address: %v, want hbasestore.ErrConfig", err)
	}
}

func TestHBaseStoreConfig(t *testing.T) {
	h := HBase{HBaseZK: " a:1,, b:2 ", HBaseNamespace: "ns", HBaseCreateTables: true}
	want := hbasestore.Config{ZooKeeper: []string{"a:1", "b:2"}, Namespace: "ns", CreateTables: true}
	if got := h.HBaseStoreConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("HBaseStoreConfig = %+v, want %+v", got, want)
	}
	sec := DefaultHBase()
	sec.HBaseKerberosKeytab, sec.HBaseKerberosPrincipal = "/k", "u@R"
	if k := sec.HBaseKerberos(); k.ZooKeeperPlain || k.ZooKeeperPrincipal != "zookeeper/_HOST" {
		t.Errorf("default Kerberos: ZooKeeperPlain %v, ZooKeeperPrincipal %q; want SASL to zookeeper/_HOST", k.ZooKeeperPlain, k.ZooKeeperPrincipal)
	}
	sec.HBaseZKSASL, sec.HBaseZKKerberosService = false, "zk/_HOST@R"
	if k := sec.HBaseKerberos(); !k.ZooKeeperPlain || k.ZooKeeperPrincipal != "zk/_HOST@R" {
		t.Errorf("--hbase-zk-sasl=false: ZooKeeperPlain %v, ZooKeeperPrincipal %q", k.ZooKeeperPlain, k.ZooKeeperPrincipal)
	}
	if q := (HBase{}).HBaseQuorum(); q != nil {
		t.Errorf("empty quorum %q", q)
	}
}

// TestHBaseSecurityFlagsDeclared: every name in HBaseSecurityFlags is a
// flag HBaseFlags declares, and every security flag it declares is listed.
func TestHBaseSecurityFlagsDeclared(t *testing.T) {
	var h HBase
	s := NewSet("tool", errTest, io.Discard, Usage{})
	h.HBaseFlags(s.Flags(), "", "")
	listed := map[string]bool{}
	for _, name := range HBaseSecurityFlags {
		listed[name] = true
		if s.Flags().Lookup(name) == nil {
			t.Errorf("%s is listed but not declared", name)
		}
	}
	for _, name := range []string{"hbase-zk", "hbase-namespace"} {
		listed[name] = true
	}
	s.Flags().VisitAll(func(f *flag.Flag) {
		if !listed[f.Name] {
			t.Errorf("-%s is declared but not in HBaseSecurityFlags", f.Name)
		}
	})
}
