package server

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadConfigLayers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "simdex.json")
	if err := os.WriteFile(file, []byte(`{"data_dir": "from-file", "max_batch": 7, "addr": "127.0.0.1:9000"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SIMDEX_CONFIG": file, "SIMDEX_MAX_BATCH": "9", "SIMDEX_REQUEST_TIMEOUT": "2s", "SIMDEX_GC_PERCENT": "150"}
	cfg, err := LoadConfig([]string{"--addr", "127.0.0.1:9100"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "from-file" || cfg.MaxBatch != 9 || cfg.Addr != "127.0.0.1:9100" || cfg.RequestTimeout != 2*time.Second || cfg.GCPercent != 150 {
		t.Fatalf("layering wrong: %+v", cfg)
	}
	if cfg.MaxBodyBytes != DefaultConfig().MaxBodyBytes {
		t.Fatalf("default lost: %+v", cfg)
	}
}

func TestConfigRefusesOpenNetworkWithoutKeys(t *testing.T) {
	_, err := LoadConfig([]string{"--addr", "0.0.0.0:8080"}, func(string) string { return "" }, io.Discard)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "API keys") {
		t.Fatalf("err = %v", err)
	}
	cfg, err := LoadConfig([]string{"--addr", "0.0.0.0:8080", "--api-keys", "a-long-enough-secret-key"}, func(string) string { return "" }, io.Discard)
	if err != nil || len(cfg.APIKeys) != 1 {
		t.Fatalf("with keys: %v %+v", err, cfg)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Store = "cassandra" },
		func(c *Config) { c.MaxBodyBytes = 10 },
		func(c *Config) { c.MaxBatch = 0 },
		func(c *Config) { c.Layout.K = 9 },
		func(c *Config) { c.LogLevel = "loud" },
		func(c *Config) { c.GCPercent = -1 },
		func(c *Config) { c.GCPercent = 20000 },
		func(c *Config) { c.Addr = "nope" },
		func(c *Config) { c.APIKeys = []string{"short"}; c.Addr = "0.0.0.0:1" },
	}
	for i, mod := range bad {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestHelpDocumentsEveryOption(t *testing.T) {
	var out strings.Builder
	_, err := LoadConfig([]string{"--help"}, func(string) string { return "" }, &out)
	if !errors.Is(err, ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, opt := range []string{"-addr", "-data-dir", "-api-keys", "-max-body-bytes", "-request-timeout", "-shutdown-timeout", "-store", "-config", "SIMDEX_"} {
		if !strings.Contains(out.String(), opt) {
			t.Errorf("--help lacks %s", opt)
		}
	}
}

func TestHBaseStoreConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"hbase without quorum", []string{"--store", "hbase"}, nil, "--hbase-zk"},
		{"hbase quorum from env", []string{"--store", "hbase"}, map[string]string{"SIMDEX_HBASE_ZK": "127.0.0.1:2181,127.0.0.2:2181"}, ""},
		{"bad namespace", []string{"--store", "hbase", "--hbase-zk", "h:1", "--hbase-namespace", "a:b"}, nil, "namespace"},
		{"quorum without port", []string{"--store", "hbase", "--hbase-zk", "zkhost"}, nil, "no port"},
		{"unknown store", []string{"--store", "cassandra"}, nil, "want \"pebble\" or \"hbase\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadConfig(tc.args, env(tc.env), io.Discard)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				hc := cfg.hbaseStoreConfig()
				if len(hc.ZooKeeper) != 2 || hc.Namespace != "simdex" || hc.LockLease < 6*cfg.RequestTimeout {
					t.Fatalf("store config %+v", hc)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("LoadConfig = %v, want ErrConfig mentioning %q", err, tc.wantErr)
			}
		})
	}
}
