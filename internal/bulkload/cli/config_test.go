package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
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
