package hbasestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/storetest"
)

var nsSeq atomic.Int64

// openFresh opens a store on a namespace of its own (fresh tables), and
// drops the tables when the test ends.
func openFresh(t testing.TB) *hbasestore.Store {
	t.Helper()
	zk := hbasetest.ZK(t)
	return openFreshWith(t, "t", func(ns string) hbasestore.Config {
		return hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns}
	})
}

// openFreshWith is openFresh on the HBase config(ns) reaches: the
// namespace is named after prefix, the process, the clock and a sequence
// number.
func openFreshWith(t testing.TB, prefix string, config func(ns string) hbasestore.Config) *hbasestore.Store {
	t.Helper()
	ns := fmt.Sprintf("%s_%d", hbasetest.Namespace(prefix), nsSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := config(ns)
	cfg.CreateTables, cfg.Compression = true, testCompression
	s, err := hbasestore.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		drop(t, config(ns))
	})
	return s
}

// testCompression is the production default: the test HBase has the codec.
var testCompression = "SNAPPY"

// drop drops the namespace cfg names, through a store opened with cfg.
func drop(t testing.TB, cfg hbasestore.Config) {
	ns := cfg.Namespace
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := hbasestore.Open(ctx, cfg)
	if err != nil {
		t.Logf("drop %s: %v", ns, err)
		return
	}
	defer s.Close()
	if err := hbasestore.Drop(ctx, s.Client(), ns); err != nil {
		t.Logf("drop %s: %v", ns, err)
	}
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storage.Store { return openFresh(t) })
}

func TestMissingTablesRefused(t *testing.T) {
	zk := hbasetest.ZK(t)
	_, err := hbasestore.Open(context.Background(), hbasestore.Config{ZooKeeper: []string{zk}, Namespace: "never_created_ns"})
	if !errors.Is(err, storage.ErrStore) {
		t.Fatalf("Open of missing tables: %v, want ErrStore", err)
	}
	if want := "simdexctl schema create"; !contains(err.Error(), want) {
		t.Fatalf("error %q does not point at %q", err, want)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  hbasestore.Config
		ok   bool
	}{
		{"ok", hbasestore.Config{ZooKeeper: []string{"h:1"}}, true},
		{"no zk", hbasestore.Config{}, false},
		{"zk without port", hbasestore.Config{ZooKeeper: []string{"h"}}, false},
		{"bad namespace", hbasestore.Config{ZooKeeper: []string{"h:1"}, Namespace: "a:b"}, false},
		{"bad family", hbasestore.Config{ZooKeeper: []string{"h:1"}, Family: "a b"}, false},
		{"sub-second ttl", hbasestore.Config{ZooKeeper: []string{"h:1"}, TTL: time.Millisecond}, false},
		{"short lease", hbasestore.Config{ZooKeeper: []string{"h:1"}, LockLease: time.Millisecond}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.WithDefaults().Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, hbasestore.ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
		})
	}
}
