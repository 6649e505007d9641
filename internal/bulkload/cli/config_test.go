package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/bulkload"
)

// TestDefaults: a command line with only a data directory and an input is
// DefaultConfig with those two, and it is valid; DefaultConfig alone lacks
// the data directory.
func TestDefaults(t *testing.T) {
	got, err := ParseArgs([]string{"--data-dir", "d", "in.csv"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.DataDir, want.Inputs = "d", []string{"in.csv"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	if err := DefaultConfig().Validate(); !errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), "--data-dir is required") {
		t.Errorf("DefaultConfig().Validate() = %v, want ErrConfig about --data-dir", err)
	}
}

// TestValidate: each value is checked before anything is opened, in the
// order of the checks (the store, then the log level, the sizes, the shard,
// the progress display, the load's configuration, the band rows).
func TestValidate(t *testing.T) {
	base := DefaultConfig()
	base.DataDir, base.Inputs = "d", []string{"in.csv"}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"log level", func(c *Config) { c.LogLevel = "loud"; c.Progress = "x" }, `--log-level "loud"`},
		{"batch bytes", func(c *Config) { c.BatchBytes = "x"; c.Shard = "y" }, `size "x"`},
		{"shard", func(c *Config) { c.Shard = "2/2"; c.Memory = "y" }, `shard "2/2"`},
		{"memory", func(c *Config) { c.Memory = "1MiB"; c.Bands = "x" }, "memory 1048576"},
		{"progress", func(c *Config) { c.Progress = "sometimes"; c.Bands = "x" }, `--progress "sometimes"`},
		{"format", func(c *Config) { c.Format = "xml" }, `format "xml"`},
		{"bands", func(c *Config) { c.Bands = "sometimes" }, `--bands "sometimes"`},
		{"no inputs", func(c *Config) { c.Inputs = nil }, "no inputs"},
	}
	if err := base.Validate(); err != nil {
		t.Fatalf("base config: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			if err := c.Validate(); !errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrConfig saying %q", err, tt.want)
			}
		})
	}
}

// TestHelp: -h prints the usage and every flag, and is not an error of the
// configuration.
func TestHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := ParseArgs([]string{"-h"}, env(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("error %v, want flag.ErrHelp", err)
	}
	if !strings.HasPrefix(out.String(), "Usage: bulkload --data-dir DIR [flags] INPUT...\n") {
		t.Errorf("usage starts %q", out.String()[:min(60, out.Len())])
	}
	flagSet(new(Config), io.Discard).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(out.String(), "  -"+f.Name+" ") && !strings.Contains(out.String(), "  -"+f.Name+"\n") {
			t.Errorf("usage lacks -%s", f.Name)
		}
	})
}

// TestSources: every flag may also come from its SIMDEX_* variable or the
// config file (--config or SIMDEX_CONFIG), a flag winning over the
// environment, which wins over the file; flags may follow the inputs.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "load.json")
	if err := os.WriteFile(file, []byte(`{"data_dir": "from-file", "workers": 3, "strict": true, "shard": "1/2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"data_dir": "d", "addr": "127.0.0.1:1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		edit func(*Config)
		err  string
	}{
		{"file", []string{"--config", file, "in.csv"}, nil, func(c *Config) {
			c.DataDir, c.Workers, c.Strict, c.Shard = "from-file", 3, true, "1/2"
		}, ""},
		{"SIMDEX_CONFIG, env over file", []string{"in.csv"}, map[string]string{"SIMDEX_CONFIG": file, "SIMDEX_WORKERS": "5"}, func(c *Config) {
			c.DataDir, c.Workers, c.Strict, c.Shard = "from-file", 5, true, "1/2"
		}, ""},
		{"flags after the inputs", []string{"in.csv", "--data-dir", "d", "b.csv", "--workers", "2"}, map[string]string{"SIMDEX_CONFIG": file}, func(c *Config) {
			c.DataDir, c.Workers, c.Strict, c.Shard = "d", 2, true, "1/2"
			c.Inputs = []string{"in.csv", "b.csv"}
		}, ""},
		{"unknown key", []string{"--config", bad, "in.csv"}, nil, nil, `config file ` + bad + `: unknown option "addr"`},
		{"bad file value", []string{"in.csv"}, map[string]string{"SIMDEX_CONFIG": file, "SIMDEX_STRICT": "maybe"}, nil, `invalid value "maybe" for SIMDEX_STRICT`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArgs(tt.args, env(tt.env), io.Discard)
			if tt.err != "" {
				if !errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want ErrConfig saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultConfig()
			want.Inputs = []string{"in.csv"}
			tt.edit(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parsed %+v, want %+v", got, want)
			}
		})
	}
}
