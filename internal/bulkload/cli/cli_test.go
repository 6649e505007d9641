package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// run is the command as cmd/bulkload's main runs it: the arguments parsed
// into a Config, then the load.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := ParseArgs(args, getenv, stderr)
	if err != nil {
		return err
	}
	return Run(ctx, cfg, stdin, stderr)
}

// TestStoreFlags: the store flags and their SIMDEX_* variables are checked
// before anything is opened; a flag wins over the environment.
func TestStoreFlags(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.csv")
	os.WriteFile(in, []byte("a,0123456789abcdef,1700000000\n"), 0o644)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no data dir", []string{in}, nil, "--data-dir is required"},
		{"unknown store", []string{"--store", "cassandra", in}, nil, `--store "cassandra"`},
		{"unknown store from env", []string{in}, map[string]string{"SIMDEX_STORE": "cassandra"}, `--store "cassandra"`},
		{"hbase without zk", []string{"--store", "hbase", "--checkpoint-dir", "cp", in}, nil, "needs --hbase-zk"},
		{"hbase without checkpoint dir", []string{"--store", "hbase", in}, map[string]string{"SIMDEX_HBASE_ZK": "127.0.0.1:1"}, "needs --checkpoint-dir"},
		{"flag wins over env", []string{"--store", "hbase", "--checkpoint-dir", "cp", in}, map[string]string{"SIMDEX_STORE": "pebble", "SIMDEX_HBASE_ZK": " , "}, "needs --hbase-zk"},
		{"bad env value", []string{in}, map[string]string{"SIMDEX_IN_FLIGHT": "many"}, "SIMDEX_IN_FLIGHT"},
		{"bad batch size", []string{"--data-dir", t.TempDir(), "--batch-bytes", "12", in}, nil, "apply bytes 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), tt.args, env(tt.env), strings.NewReader(""), &stderr, &stderr)
			if !errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrConfig saying %q", err, tt.want)
			}
		})
	}
}

// TestLoadIntoHBase runs the command against the suite's HBase, the quorum
// given through SIMDEX_HBASE_ZK as an operator would, and reads the result
// back: every document findable, counters set.
func TestLoadIntoHBase(t *testing.T) {
	zk := hbasetest.ZK(t)
	dir := t.TempDir()
	ns := fmt.Sprintf("cmdbl%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	var lines strings.Builder
	fps := map[string]fingerprint.Fingerprint{}
	for i := range 500 {
		fp := fingerprint.Fingerprint(uint64(i+1) * 0x9e3779b97f4a7c15)
		id := fmt.Sprintf("doc%d", i)
		fps[id] = fp
		fmt.Fprintf(&lines, "%s,%s,%d\n", id, fp, 1700000000+i)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	args := []string{"--store", "hbase", "--hbase-namespace", ns, "--hbase-create-tables", "--checkpoint-dir", filepath.Join(dir, "cp"), "--progress", "none", "--memory", "256MiB", in}
	if err := run(ctx, args, env(map[string]string{"SIMDEX_HBASE_ZK": zk}), nil, &stderr, &stderr); err != nil {
		t.Fatalf("bulkload: %v\n%s", err, stderr.String())
	}
	// The default import (auto) bulk-loads HFiles into a standalone HBase
	// on this machine.
	if !strings.Contains(stderr.String(), "HFiles imported") || !strings.Contains(stderr.String(), "written as puts instead 0)") {
		t.Errorf("summary does not report the HFile import:\n%s", stderr.String())
	}
	st, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hbasestore.Drop(context.Background(), st.Client(), ns); err != nil {
			t.Logf("drop %s: %v", ns, err)
		}
		st.Close()
	})
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := ix.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Documents != 500 || stats.Fingerprints != 500 {
		t.Errorf("counters: %d documents, %d fingerprints, want 500 each", stats.Documents, stats.Fingerprints)
	}
	for id, fp := range fps {
		res, err := ix.Lookup(ctx, fp^0b101, kvindex.LookupOptions{K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].ID != id || res.Hits[0].Distance != 2 {
			t.Fatalf("lookup near %s: %+v, want %s at distance 2", id, res.Hits, id)
		}
	}
}

// TestBandsFlag: --bands means what the server's flag means: a new index
// gets band rows unless off; an existing index keeps its choice, and on/off
// refuse one that does not match (before anything is loaded).
func TestBandsFlag(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in.csv")
	os.WriteFile(in, []byte("a,0123456789abcdef,1700000000\nb,fedcba9876543210,1700000001\n"), 0o644)
	load := func(dir string, extra ...string) error {
		var stderr bytes.Buffer
		args := append([]string{"--data-dir", dir, "--progress", "none", "--memory", "256MiB", "--checkpoint-dir", filepath.Join(root, fmt.Sprint("cp", time.Now().UnixNano()))}, extra...)
		err := run(context.Background(), append(args, in), env(nil), strings.NewReader(""), &stderr, &stderr)
		if err != nil {
			return fmt.Errorf("%w\n%s", err, stderr.String())
		}
		return nil
	}
	hasBands := func(dir string) bool {
		t.Helper()
		st, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := kvindex.Open(context.Background(), st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion})
		if err != nil {
			t.Fatal(errors.Join(err, st.Close()))
		}
		defer ix.Close()
		if d, err := ix.Get(context.Background(), "a"); err != nil || d.Fingerprint != 0x0123456789abcdef {
			t.Fatalf("loaded document a: %+v %v", d, err)
		}
		return ix.HasBands()
	}
	auto, off := filepath.Join(root, "auto"), filepath.Join(root, "off")
	if err := load(auto); err != nil {
		t.Fatal(err)
	}
	if !hasBands(auto) {
		t.Error("a new index made with the default --bands auto has no band rows; the server would give it them")
	}
	if err := load(off, "--bands", "off"); err != nil {
		t.Fatal(err)
	}
	if hasBands(off) {
		t.Error("--bands off made an index with band rows")
	}
	for _, tt := range []struct {
		dir, flag string
		ok        bool
	}{{off, "auto", true}, {off, "on", false}, {auto, "off", false}, {auto, "on", true}} {
		err := load(tt.dir, "--bands", tt.flag)
		if tt.ok && err != nil {
			t.Errorf("--bands %s into %s: %v", tt.flag, filepath.Base(tt.dir), err)
		}
		if !tt.ok && (!errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), "bands")) {
			t.Errorf("--bands %s into %s: %v, want ErrConfig about bands", tt.flag, filepath.Base(tt.dir), err)
		}
	}
	if err := load(auto, "--bands", "sometimes"); !errors.Is(err, bulkload.ErrConfig) || !strings.Contains(err.Error(), `--bands "sometimes"`) {
		t.Errorf("bad --bands: %v", err)
	}
}
