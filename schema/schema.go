// Package schema declares simdex's HBase schema (namespace, the tables
// index/fp/docs/meta/seen, family attributes, pre-split keys) and the admin
// operations on it: Create, Verify (drift from the declaration), Describe
// (printed the way HBase's shell prints describe), Drop and Plan (sizing).
// simdexctl schema exposes them; storage/hbasestore creates missing tables
// from the same declaration.
package schema

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// ErrInvalid marks an invalid Schema.
var ErrInvalid = errors.New("schema: invalid")

// ErrDrift is returned by Verify when the cluster differs from the
// declaration.
var ErrDrift = errors.New("schema: drift from the declared schema")

// Schema is the declared layout of simdex's tables on HBase.
type Schema struct {
	// Namespace holds the tables (default "simdex").
	Namespace string
	// Family is every table's column family (default "c").
	Family string
	// Compression of every family but the index's (default "SNAPPY"). The
	// index family is never block-compressed: its values, the base sets,
	// are Snappy-compressed already (see familyAttributes).
	Compression string
	// Retention is the TTL of the index, fp and docs families (0: keep
	// forever). The meta table never expires.
	Retention time.Duration
	// MOBThreshold: index cells larger than this many bytes (oversize base
	// sets) are stored as MOB (default 100 KiB; negative: no MOB).
	MOBThreshold int
	// Layout decides the index table's pre-split keys (default
	// fingerprint.DefaultLayout).
	Layout fingerprint.Layout
	// SeenTTL is the TTL of the seen table (package seen): the seen
	// retention plus one time bucket, so a bucket's cells (timestamped with
	// the bucket's start) live until its last item has been kept for the
	// whole retention (default 31 days: seen.DefaultRetention plus
	// seen.DefaultBucketWidth; negative: keep forever).
	SeenTTL time.Duration
	// SeenRegions is the seen table's region count at creation (default 1);
	// its rows start with a 2-byte salt, so the split keys cut the salt
	// space into equal parts.
	SeenRegions int
	// IndexRegions is the index table's region count at creation (default
	// 1: no pre-split); it is rounded up to a multiple of the layout's
	// table count T so each permutation table gets equal prefix ranges.
	IndexRegions int
	// MetaRegions is the meta table's region count at creation (default
	// 8). The meta table holds the servers' lease locks, one row per lock
	// name (LockRowPrefix and an 8-byte name), and taking and releasing
	// them is most of what insert-if-unique costs the region servers; the
	// split keys (MetaSplitKeys) cut the lock rows into ranges of about
	// equal use, so a cluster spreads them over its region servers instead
	// of serving every lock from the one holding a single meta region. The
	// other meta rows (settings, counters) sort into the first and last
	// regions.
	MetaRegions int
}

// LockRowPrefix starts every lease-lock row of the meta table (the HBase
// store's Locker; docs/ARCHITECTURE.md, "Across processes on HBase").
const LockRowPrefix = "lock:"

// LockFamily is the meta table's second family, which holds only the lease
// locks' cells. It is the one family without NEW_VERSION_BEHAVIOR: under
// that behavior HBase keeps every version of a cell (puts and delete
// markers) through flushes and minor compactions until the next major
// compaction, and a read walks them all, so a lock cell taken and released
// thousands of times made every later take and release of it slower, until
// the region's next major compaction (by default a week). Here a read finds
// the newest version and stops, and a flush keeps one version. The Locker
// only ever puts into this family (a release puts an empty value) and HBase
// gives a conditional put a timestamp no lower than the cell's it checked,
// so the versions of a lock cell are ordered even across clock differences
// between region servers: nothing this family holds needs the new behavior.
const LockFamily = "l"

// WithDefaults returns s with unset fields defaulted.
func (s Schema) WithDefaults() Schema {
	if s.Namespace == "" {
		s.Namespace = "simdex"
	}
	if s.Family == "" {
		s.Family = "c"
	}
	if s.Compression == "" {
		s.Compression = "SNAPPY"
	}
	if s.MOBThreshold == 0 {
		s.MOBThreshold = 100 << 10
	}
	if s.Layout == (fingerprint.Layout{}) {
		s.Layout = fingerprint.DefaultLayout
	}
	if s.IndexRegions == 0 {
		s.IndexRegions = 1
	}
	if s.SeenTTL == 0 {
		s.SeenTTL = DefaultSeenTTL
	}
	if s.SeenRegions == 0 {
		s.SeenRegions = 1
	}
	if s.MetaRegions == 0 {
		s.MetaRegions = DefaultMetaRegions
	}
	return s
}

// Validate reports the first invalid field of a defaulted Schema.
func (s Schema) Validate() error {
	if !validName(s.Namespace) {
		return fmt.Errorf("%w: namespace %q (letters, digits, _ only)", ErrInvalid, s.Namespace)
	}
	if !validName(s.Family) {
		return fmt.Errorf("%w: family %q (letters, digits, _ only)", ErrInvalid, s.Family)
	}
	if s.Family == LockFamily {
		return fmt.Errorf("%w: family %q is the meta table's lock family", ErrInvalid, s.Family)
	}
	switch s.Compression {
	case "SNAPPY", "NONE", "GZ", "LZ4", "ZSTD", "LZO":
	default:
		return fmt.Errorf("%w: compression %q", ErrInvalid, s.Compression)
	}
	if s.Retention < 0 || (s.Retention > 0 && s.Retention < time.Second) {
		return fmt.Errorf("%w: retention %v (0 or at least 1s)", ErrInvalid, s.Retention)
	}
	if err := s.Layout.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if s.SeenTTL > 0 && s.SeenTTL < time.Second {
		return fmt.Errorf("%w: seen TTL %v (at least 1s, or negative for none)", ErrInvalid, s.SeenTTL)
	}
	if s.SeenRegions < 1 || s.SeenRegions > 65536 {
		return fmt.Errorf("%w: seen regions %d (1..65536)", ErrInvalid, s.SeenRegions)
	}
	if s.IndexRegions < 1 || s.IndexRegions > 100000 {
		return fmt.Errorf("%w: index regions %d (1..100000)", ErrInvalid, s.IndexRegions)
	}
	if s.MetaRegions < 1 || s.MetaRegions > 256 {
		return fmt.Errorf("%w: meta regions %d (1..256)", ErrInvalid, s.MetaRegions)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// TableName is the HBase name of a logical table.
func (s Schema) TableName(t storage.Table) string { return s.Namespace + ":" + t.String() }

// Family attributes and why (docs/OPERATIONS.md):
//   - COMPRESSION: fp/docs rows and block overhead compress well. Not on
//     the index family (NONE): its values are Snappy-compressed base sets
//     already, so a codec there only costs CPU on every block load.
//   - DATA_BLOCK_ENCODING=FAST_DIFF: neighbouring keys share long prefixes.
//     Not on the index family (NONE): its rows are a few short cells with
//     long values, so the encoding saves little space, and seeking in a
//     FAST_DIFF block decodes keys on every Get of a lookup; NONE cut the
//     region server's CPU per lookup by about a third
//     (benchmarks/2026-11-23-hbase-lookup-cost.md).
//   - BLOCKSIZE=4096 (index only; HBase's default is 64 KiB): a Get finds
//     its row by a linear scan of the cells of one data block, and with
//     64 KiB blocks of ~500 index rows that scan was ~70% of the region
//     server's handler CPU (JFR); 4 KiB blocks cut the HBase CPU per
//     lookup by about 40% (benchmarks/2026-11-23-hbase-region-server.md).
//     The block index grows 16x (a few MB per 10^8 fingerprints) and is
//     cached like data.
//   - BLOOMFILTER=ROW: every read is a whole-row Get.
//   - VERSIONS=1: simdex never reads old versions.
//   - NEW_VERSION_BEHAVIOR=true: a delete marker does not hide a later put
//     with the same timestamp (cells are deleted and re-put within a
//     millisecond, and index cells carry old bucket timestamps).
//   - TTL: retention, counted from each cell's (bucket) timestamp.
//   - IS_MOB/MOB_THRESHOLD (index only): oversize base sets go to MOB files
//     so they do not bloat region compactions.
func (s Schema) familyAttributes(t storage.Table) map[string]string {
	a := map[string]string{
		hbase.AttrCompression:       s.Compression,
		hbase.AttrDataBlockEncoding: "FAST_DIFF",
		hbase.AttrBloomFilter:       "ROW",
		hbase.AttrVersions:          "1",
		AttrNewVersionBehavior:      "true",
	}
	switch {
	case t == storage.TableSeen:
		if s.SeenTTL > 0 {
			a[hbase.AttrTTL] = strconv.FormatInt(int64(s.SeenTTL/time.Second), 10)
		}
	case s.Retention > 0 && t != storage.TableMeta:
		a[hbase.AttrTTL] = strconv.FormatInt(int64(s.Retention/time.Second), 10)
	}
	if t == storage.TableIndex {
		a[hbase.AttrCompression] = "NONE"
		a[hbase.AttrDataBlockEncoding] = "NONE"
		a[hbase.AttrBlockSize] = strconv.Itoa(IndexBlockSize)
	}
	if t == storage.TableIndex && s.MOBThreshold > 0 {
		a[hbase.AttrIsMOB] = "true"
		a[hbase.AttrMOBThreshold] = strconv.Itoa(s.MOBThreshold)
	}
	return a
}

// LockFamilyDescriptor is the meta table's lock family (LockFamily): one
// small cell per lock row, read and written by conditional puts, so no
// compression or key encoding (CPU on every read), small blocks (a point
// read's linear seek within its block stays short) kept in memory, a row
// Bloom filter, one version, and NEW_VERSION_BEHAVIOR off.
func LockFamilyDescriptor() hbase.FamilyDescriptor {
	return hbase.FamilyDescriptor{Name: LockFamily, Attributes: map[string]string{
		hbase.AttrCompression:       "NONE",
		hbase.AttrDataBlockEncoding: "NONE",
		hbase.AttrBlockSize:         strconv.Itoa(IndexBlockSize),
		hbase.AttrBloomFilter:       "ROW",
		hbase.AttrVersions:          "1",
		hbase.AttrInMemory:          "true",
		AttrNewVersionBehavior:      "false",
	}}
}

// IndexBlockSize is the index family's HFile data block size (BLOCKSIZE):
// small blocks keep a point Get's linear seek within its block short.
// Writers of HFiles for the index family (the bulk loader's import path)
// should use it too; HBase rewrites other block sizes at major compaction.
const IndexBlockSize = 4096

// AttrNewVersionBehavior is HBase's NEW_VERSION_BEHAVIOR family attribute.
const AttrNewVersionBehavior = "NEW_VERSION_BEHAVIOR"

// Table is one declared table: its descriptor and pre-split keys.
type Table struct {
	Table      storage.Table
	Descriptor hbase.TableDescriptor
	SplitKeys  [][]byte
}

// Tables returns the declared tables in storage.Tables order.
func (s Schema) Tables() []Table {
	var out []Table
	for _, t := range storage.Tables {
		td := hbase.TableDescriptor{Name: s.TableName(t), Families: []hbase.FamilyDescriptor{{Name: s.Family, Attributes: s.familyAttributes(t)}}}
		if t == storage.TableMeta {
			td.Families = append(td.Families, LockFamilyDescriptor())
		}
		var splits [][]byte
		switch t {
		case storage.TableIndex:
			splits = s.IndexSplitKeys()
		case storage.TableSeen:
			splits = s.SeenSplitKeys()
		case storage.TableMeta:
			splits = s.MetaSplitKeys()
		}
		out = append(out, Table{Table: t, Descriptor: td, SplitKeys: splits})
	}
	return out
}

// DefaultSeenTTL is the seen table's default TTL: 30 days of retention
// plus a one-day bucket (package seen's defaults).
const DefaultSeenTTL = 31 * 24 * time.Hour

// SeenSplitKeys are the seen table's pre-split keys: seen rows start with a
// 2-byte salt (a hash of the user), so SeenRegions equal ranges of the salt
// spread users evenly.
func (s Schema) SeenSplitKeys() [][]byte {
	var keys [][]byte
	for j := 1; j < s.SeenRegions; j++ {
		v := j * 65536 / s.SeenRegions
		keys = append(keys, []byte{byte(v >> 8), byte(v)})
	}
	return keys
}

// DefaultMetaRegions is the meta table's default region count.
const DefaultMetaRegions = 8

// MetaSplitKeys are the meta table's pre-split keys: the lock rows of
// kvindex.LockNameBounds, so that each of the MetaRegions regions serves
// about as many lock operations (LockRowPrefix and the 8-byte big-endian
// name is the lock row, storage/hbasestore's Locker).
func (s Schema) MetaSplitKeys() [][]byte {
	var keys [][]byte
	for _, name := range kvindex.LockNameBounds(s.MetaRegions) {
		keys = append(keys, binary.BigEndian.AppendUint64([]byte(LockRowPrefix), name))
	}
	return keys
}

// IndexSplitKeys are the index table's pre-split keys: each permutation
// table t starts a region (row key byte 0 is t), and its prefix range is cut
// into IndexRegions/T equal parts (prefix right-aligned in ceil(P_t/8)
// bytes, as in docs/FORMAT.md).
func (s Schema) IndexSplitKeys() [][]byte {
	if s.IndexRegions <= 1 {
		return nil
	}
	nt := s.Layout.NumTables()
	per := (s.IndexRegions + nt - 1) / nt
	var keys [][]byte
	for t := range nt {
		if t > 0 {
			keys = append(keys, []byte{byte(t)})
		}
		p := s.Layout.PrefixBits(t)
		n := (p + 7) / 8
		for j := 1; j < per; j++ {
			prefix := uint64(j) * (uint64(1) << p) / uint64(per)
			k := []byte{byte(t)}
			for i := n - 1; i >= 0; i-- {
				k = append(k, byte(prefix>>(8*i)))
			}
			keys = append(keys, k)
		}
	}
	return keys
}

// Create creates the namespace and every missing table (in parallel is not
// needed for four tables; each waits for the master). Existing tables are
// left alone; Verify reports whether they match.
func Create(ctx context.Context, c *hbase.Client, s Schema) (created []string, err error) {
	if err := c.CreateNamespace(ctx, s.Namespace); err != nil && !errors.Is(err, hbase.ErrNamespaceExists) {
		return nil, fmt.Errorf("schema: create namespace %s: %w", s.Namespace, err)
	}
	for _, t := range s.Tables() {
		td := t.Descriptor
		err := c.CreateTable(ctx, &td, t.SplitKeys)
		switch {
		case errors.Is(err, hbase.ErrTableExists):
		case err != nil:
			return created, fmt.Errorf("schema: create table %s: %w", td.Name, err)
		default:
			created = append(created, td.Name)
		}
	}
	return created, nil
}

// Drift is one difference between the cluster and the declaration.
type Drift struct {
	Table string
	What  string
}

func (d Drift) String() string { return d.Table + ": " + d.What }

// Verify lists every drift: missing tables or families, attributes that
// differ (only the declared ones are compared; HBase adds many defaults).
// It returns ErrDrift when the list is not empty.
func Verify(ctx context.Context, c *hbase.Client, s Schema) ([]Drift, error) {
	var drifts []Drift
	for _, t := range s.Tables() {
		want := t.Descriptor
		got, err := c.DescribeTable(ctx, want.Name)
		if errors.Is(err, hbase.ErrTableNotFound) || errors.Is(err, hbase.ErrNamespaceNotFound) {
			drifts = append(drifts, Drift{want.Name, "table missing"})
			continue
		}
		if err != nil {
			return drifts, fmt.Errorf("schema: describe %s: %w", want.Name, err)
		}
		for _, wf := range want.Families {
			i := slices.IndexFunc(got.Families, func(f hbase.FamilyDescriptor) bool { return f.Name == wf.Name })
			if i < 0 {
				drifts = append(drifts, Drift{want.Name, fmt.Sprintf("family %q missing", wf.Name)})
				continue
			}
			gf := got.Families[i]
			for _, k := range slices.Sorted(maps.Keys(wf.Attributes)) {
				if g, ok := attr(gf.Attributes, k); !ok || !strings.EqualFold(g, wf.Attributes[k]) {
					drifts = append(drifts, Drift{want.Name, fmt.Sprintf("family %s: %s = %q, want %q", wf.Name, k, g, wf.Attributes[k])})
				}
			}
			if _, declared := wf.Attributes[hbase.AttrTTL]; !declared {
				if g, ok := attr(gf.Attributes, hbase.AttrTTL); ok && g != "2147483647" && g != "FOREVER" {
					drifts = append(drifts, Drift{want.Name, fmt.Sprintf("family %s: TTL = %q, want FOREVER", wf.Name, g)})
				}
			}
		}
		for _, gf := range got.Families {
			if !slices.ContainsFunc(want.Families, func(f hbase.FamilyDescriptor) bool { return f.Name == gf.Name }) {
				drifts = append(drifts, Drift{want.Name, fmt.Sprintf("undeclared family %q", gf.Name)})
			}
		}
	}
	if len(drifts) > 0 {
		return drifts, fmt.Errorf("%w: %d difference(s)", ErrDrift, len(drifts))
	}
	return nil, nil
}

// attr reads an attribute, also under the spelling HBase uses for it in a
// table schema when that differs (e.g. IS_MOB stored as "IS_MOB").
func attr(m map[string]string, k string) (string, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	for mk, v := range m {
		if strings.EqualFold(mk, k) {
			return v, true
		}
	}
	return "", false
}

// Describe prints a table the way HBase's shell `describe` does:
//
//	Table ns:index is ENABLED
//	ns:index
//	COLUMN FAMILIES DESCRIPTION
//	{NAME => 'c', BLOOMFILTER => 'ROW', ...}
//
// with the family's attributes in key order.
func Describe(td *hbase.TableDescriptor, enabled bool) string {
	var b strings.Builder
	state := "ENABLED"
	if !enabled {
		state = "DISABLED"
	}
	fmt.Fprintf(&b, "Table %s is %s\n%s\nCOLUMN FAMILIES DESCRIPTION\n", td.Name, state, td.Name)
	for _, f := range td.Families {
		parts := []string{fmt.Sprintf("NAME => '%s'", f.Name)}
		for _, k := range slices.Sorted(maps.Keys(f.Attributes)) {
			parts = append(parts, fmt.Sprintf("%s => '%s'", k, f.Attributes[k]))
		}
		fmt.Fprintf(&b, "{%s}\n", strings.Join(parts, ", "))
	}
	return b.String()
}

// DescribeAll describes every declared table as the cluster has it.
func DescribeAll(ctx context.Context, c *hbase.Client, s Schema) (string, error) {
	var b strings.Builder
	for _, t := range s.Tables() {
		td, err := c.DescribeTable(ctx, t.Descriptor.Name)
		if err != nil {
			return b.String(), fmt.Errorf("schema: describe %s: %w", t.Descriptor.Name, err)
		}
		en, err := c.TableEnabled(ctx, td.Name)
		if err != nil {
			return b.String(), fmt.Errorf("schema: %s enabled: %w", td.Name, err)
		}
		b.WriteString(Describe(td, en))
	}
	return b.String(), nil
}

// Drop disables and deletes the declared tables and the namespace (which
// must then be empty). Missing tables are skipped.
func Drop(ctx context.Context, c *hbase.Client, s Schema) error {
	var errs []error
	for _, t := range s.Tables() {
		name := t.Descriptor.Name
		err := c.DisableTable(ctx, name)
		if err == nil || errors.Is(err, hbase.ErrTableDisabled) {
			err = c.DeleteTable(ctx, name)
		}
		if err != nil && !errors.Is(err, hbase.ErrTableNotFound) && !errors.Is(err, hbase.ErrNamespaceNotFound) {
			errs = append(errs, fmt.Errorf("schema: drop %s: %w", name, err))
		}
	}
	if err := c.DeleteNamespace(ctx, s.Namespace); err != nil && !errors.Is(err, hbase.ErrNamespaceNotFound) {
		errs = append(errs, fmt.Errorf("schema: drop namespace %s: %w", s.Namespace, err))
	}
	return errors.Join(errs...)
}
