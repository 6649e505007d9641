package schema

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

func TestIndexSplitKeys(t *testing.T) {
	tests := []struct {
		name    string
		layout  fingerprint.Layout
		regions int
		want    [][]byte
	}{
		{"one region", fingerprint.Layout{B: 4, K: 3}, 1, nil},
		{"one per table", fingerprint.Layout{B: 4, K: 3}, 4, [][]byte{{1}, {2}, {3}}},
		{"two per table", fingerprint.Layout{B: 4, K: 3}, 8, [][]byte{{0, 0x80, 0}, {1}, {1, 0x80, 0}, {2}, {2, 0x80, 0}, {3}, {3, 0x80, 0}}},
		{"rounded up to a multiple of T", fingerprint.Layout{B: 4, K: 3}, 5, [][]byte{{0, 0x80, 0}, {1}, {1, 0x80, 0}, {2}, {2, 0x80, 0}, {3}, {3, 0x80, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Schema{Layout: tc.layout, IndexRegions: tc.regions}.WithDefaults()
			got := s.IndexSplitKeys()
			if !slices.EqualFunc(got, tc.want, bytes.Equal) {
				t.Fatalf("split keys %x, want %x", got, tc.want)
			}
			if !slices.IsSortedFunc(got, bytes.Compare) {
				t.Fatalf("split keys not sorted: %x", got)
			}
		})
	}
	// B=5: 26-bit and 25-bit prefixes in 4 bytes, still sorted and distinct.
	s := Schema{Layout: fingerprint.Layout{B: 5, K: 3}, IndexRegions: 40}.WithDefaults()
	keys := s.IndexSplitKeys()
	if len(keys) != 39 || !slices.IsSortedFunc(keys, bytes.Compare) || len(slices.CompactFunc(slices.Clone(keys), bytes.Equal)) != 39 {
		t.Fatalf("B=5 split keys: %d %x", len(keys), keys)
	}
}

func TestDeclaredAttributes(t *testing.T) {
	s := Schema{Retention: 90 * 24 * time.Hour}.WithDefaults()
	for _, tb := range s.Tables() {
		a := tb.Descriptor.Families[0].Attributes
		// The index family holds Snappy-compressed base sets: no block
		// compression, no key encoding (CPU per lookup on the region server).
		comp, enc := "SNAPPY", "FAST_DIFF"
		bs := ""
		if tb.Table == storage.TableIndex {
			comp, enc, bs = "NONE", "NONE", "4096"
		}
		// Small blocks only for the index family (a lookup's point Gets);
		// the other tables keep HBase's default.
		if got, ok := a[hbase.AttrBlockSize]; got != bs || ok != (bs != "") {
			t.Fatalf("%s BLOCKSIZE %q, want %q", tb.Descriptor.Name, got, bs)
		}
		if a[hbase.AttrCompression] != comp || a[hbase.AttrDataBlockEncoding] != enc || a[hbase.AttrBloomFilter] != "ROW" || a[hbase.AttrVersions] != "1" || a[AttrNewVersionBehavior] != "true" {
			t.Fatalf("%s: %v", tb.Descriptor.Name, a)
		}
		ttl, hasTTL := a[hbase.AttrTTL]
		if tb.Table == storage.TableMeta && hasTTL {
			t.Fatalf("meta must not expire: %v", a)
		}
		if tb.Table == storage.TableSeen {
			// The seen table expires by its own retention (31 days by default).
			if ttl != "2678400" {
				t.Fatalf("%s TTL %q, want 2678400 (SeenTTL)", tb.Descriptor.Name, ttl)
			}
			continue
		}
		if tb.Table != storage.TableMeta && ttl != "7776000" {
			t.Fatalf("%s TTL %q, want 7776000", tb.Descriptor.Name, ttl)
		}
		if (a[hbase.AttrIsMOB] == "true") != (tb.Table == storage.TableIndex) {
			t.Fatalf("%s MOB: %v", tb.Descriptor.Name, a)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		s    Schema
	}{
		{"namespace", Schema{Namespace: "a:b"}},
		{"compression", Schema{Compression: "BROTLI9"}},
		{"retention", Schema{Retention: time.Millisecond}},
		{"layout", Schema{Layout: fingerprint.Layout{B: 2, K: 5}}},
		{"regions", Schema{IndexRegions: -1}},
		{"seen ttl", Schema{SeenTTL: time.Millisecond}},
		{"seen regions", Schema{SeenRegions: 70000}},
		{"meta regions", Schema{MetaRegions: 257}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.WithDefaults().Validate(); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate = %v, want ErrInvalid", err)
			}
		})
	}
	if err := (Schema{}).WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeFormat(t *testing.T) {
	td := &hbase.TableDescriptor{Name: "simdex:docs", Families: []hbase.FamilyDescriptor{{Name: "c", Attributes: map[string]string{"VERSIONS": "1", "BLOOMFILTER": "ROW"}}}}
	want := "Table simdex:docs is ENABLED\nsimdex:docs\nCOLUMN FAMILIES DESCRIPTION\n{NAME => 'c', BLOOMFILTER => 'ROW', VERSIONS => '1'}\n"
	if got := Describe(td, true); got != want {
		t.Fatalf("Describe:\n%s\nwant:\n%s", got, want)
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		in      PlanInput
		wantB   int
		regions int
	}{
		// 10^6: B=4 reads 4*10^6/65536 = 61 candidates.
		{PlanInput{Fingerprints: 1_000_000}, 4, 4},
		// 10^8: B=4 would read 6104; B=5 reads ~10*10^8/2^25.5 ~ 40.
		{PlanInput{Fingerprints: 100_000_000}, 5, 10},
		// 10^7 + 100/s for 30 days = 2.692e8 live: 17.5 GiB of index, 2 regions by size, T=10 by layout.
		{PlanInput{Fingerprints: 10_000_000, InsertsPerSecond: 100, Retention: 30 * 24 * time.Hour}, 5, 10},
	}
	for _, tc := range tests {
		p, err := MakePlan(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if p.Layout.B != tc.wantB || p.IndexRegions != tc.regions {
			t.Fatalf("%+v: B=%d regions=%d, want B=%d regions=%d\n%s", tc.in, p.Layout.B, p.IndexRegions, tc.wantB, tc.regions, p)
		}
		if p.Candidates > maxCandidates || p.IndexBytes != p.Live*int64(p.Layout.NumTables())*bytesPerResidual {
			t.Fatalf("plan arithmetic: %+v", p)
		}
		if !strings.Contains(p.String(), "recommendation: layout B=") {
			t.Fatalf("plan text:\n%s", p)
		}
	}
	if _, err := MakePlan(PlanInput{Fingerprints: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative input: %v", err)
	}
}

func TestSeenSplitKeys(t *testing.T) {
	tests := []struct {
		regions int
		want    [][]byte
	}{
		{1, nil},
		{2, [][]byte{{0x80, 0x00}}},
		{4, [][]byte{{0x40, 0x00}, {0x80, 0x00}, {0xc0, 0x00}}},
	}
	for _, tc := range tests {
		got := Schema{SeenRegions: tc.regions}.WithDefaults().SeenSplitKeys()
		if !slices.EqualFunc(got, tc.want, bytes.Equal) {
			t.Errorf("SeenRegions %d: split keys %x, want %x", tc.regions, got, tc.want)
		}
	}
	s := Schema{SeenRegions: 1000}.WithDefaults()
	var tb Table
	for _, x := range s.Tables() {
		if x.Table == storage.TableSeen {
			tb = x
		}
	}
	if len(tb.SplitKeys) != 999 || !slices.IsSortedFunc(tb.SplitKeys, bytes.Compare) || len(slices.CompactFunc(slices.Clone(tb.SplitKeys), bytes.Equal)) != 999 {
		t.Fatalf("1000 seen regions: %d split keys", len(tb.SplitKeys))
	}
}

// TestMetaSplitKeys: the meta table's split keys are the lock rows of
// kvindex.LockNameBounds (kvindex's TestLockNameBounds checks that those
// cut the names really locked evenly), in order, one fewer than the
// regions.
func TestMetaSplitKeys(t *testing.T) {
	if got := (Schema{MetaRegions: 1}).WithDefaults().MetaSplitKeys(); got != nil {
		t.Fatalf("1 region: split keys %q", got)
	}
	s := Schema{}.WithDefaults()
	var keys [][]byte
	for _, x := range s.Tables() {
		if x.Table == storage.TableMeta {
			keys = x.SplitKeys
		}
	}
	bounds := kvindex.LockNameBounds(DefaultMetaRegions)
	if len(keys) != DefaultMetaRegions-1 || len(bounds) != len(keys) || !slices.IsSortedFunc(keys, bytes.Compare) {
		t.Fatalf("default meta split keys %q (bounds %x)", keys, bounds)
	}
	for i, k := range keys {
		if want := binary.BigEndian.AppendUint64([]byte(LockRowPrefix), bounds[i]); !bytes.Equal(k, want) {
			t.Fatalf("split key %d is %q, want %q", i, k, want)
		}
	}
}
