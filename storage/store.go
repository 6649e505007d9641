// Package storage is the narrow row/cell store simdex keeps its tables in,
// and what is shared by everything that writes them: the logical tables
// (Table), rows, cells and mutations, the Store interface that the
// embedded store (storage/pebblestore) and HBase (storage/hbasestore)
// implement, the optional sorted-cell write path (CellWriter), the
// cross-process Locker, time buckets, and the base-set codec that index
// rows and seen sets encode their sorted hashes with. The contract every
// Store passes is storage/storetest. Byte layouts are in docs/FORMAT.md.
//
// The index (package kvindex) and the seen sets (package seen) are built
// on top of it; storage knows nothing of their row layouts.
package storage

import (
	"context"
	"fmt"
	"time"
)

// Table names one of the logical tables simdex keeps. On HBase each is a
// table of its own; in the embedded store each is a key range.
type Table uint8

// The logical tables (docs/ARCHITECTURE.md; byte layouts in docs/FORMAT.md).
const (
	// TableIndex holds one row per (permutation table, prefix): base-set,
	// delta and tombstone cells of residuals.
	TableIndex Table = iota
	// TableFP holds one row per stored fingerprint: one cell per document
	// carrying it.
	TableFP
	// TableDocs holds one row per document id.
	TableDocs
	// TableMeta holds the index metadata and counters.
	TableMeta
	// TableSeen holds per-user seen sets for feeds (package seen): one
	// salted row per user, time-bucketed cells (docs/FORMAT.md, "seen
	// table").
	TableSeen
	// TableBands holds the LSH band rows of documents with a band
	// signature (fingerprint.Bands): row = band index + band hash, one
	// empty cell per document (qualifier = document id). A lookup by text
	// reads the query's band rows beside its index rows, finding
	// near-copies beyond the simhash distance (docs/FORMAT.md, "bands
	// table").
	TableBands
	numTables
)

// Tables lists every logical table, in order.
var Tables = []Table{TableIndex, TableFP, TableDocs, TableMeta, TableSeen, TableBands}

// String is the table's name, as used for HBase table names.
func (t Table) String() string {
	switch t {
	case TableIndex:
		return "index"
	case TableFP:
		return "fp"
	case TableDocs:
		return "docs"
	case TableMeta:
		return "meta"
	case TableSeen:
		return "seen"
	case TableBands:
		return "bands"
	}
	return fmt.Sprintf("table(%d)", uint8(t))
}

// Valid reports whether t is one of the known tables.
func (t Table) Valid() bool { return t < numTables }

// Cell is one (qualifier, value) pair of a row. Stores keep one version of a
// cell; a put replaces it.
type Cell struct {
	Qualifier []byte
	Value     []byte
}

// Row is a row key and its cells, sorted by qualifier (bytewise).
type Row struct {
	Key   []byte
	Cells []Cell
}

// RowKey addresses one row of one table.
type RowKey struct {
	Table Table
	Key   []byte
}

// MutationKind says what a Mutation does.
type MutationKind uint8

// The mutation kinds.
const (
	// Put writes (replaces) one cell.
	Put MutationKind = iota + 1
	// DeleteCell removes one cell; removing a missing cell is not an error.
	DeleteCell
	// DeleteRow removes every cell of a row.
	DeleteRow
	// Add adds Delta to a counter cell: an 8-byte big-endian two's complement
	// integer (the layout of HBase's Increment), created as 0 when missing.
	// Concurrent Adds never lose each other.
	Add
)

// Mutation is one change to one cell or row.
type Mutation struct {
	Kind      MutationKind
	Table     Table
	Row       []byte
	Qualifier []byte // Put, DeleteCell, Add
	Value     []byte // Put
	Delta     int64  // Add
	// Timestamp, when not zero, is the cell's version time for stores that
	// expire cells by age (HBase's family TTL counts from it): index cells
	// carry their time bucket's start so that whole buckets expire together.
	// Stores without TTLs ignore it.
	Timestamp time.Time
}

// Store is the narrow row/cell store the index and the seen sets run on,
// shaped so that it maps onto HBase (Get and Multi of rows, Mutate, Scan)
// as well as onto an embedded key-value store.
//
// Implementations wrap their own failures with ErrStore (so callers can map
// them to "service unavailable"), keep context errors matchable with
// errors.Is, and are safe for concurrent use. The contract is checked by
// storage/storetest.
type Store interface {
	// Get reads whole rows. The result has one Row per key, in the order of
	// keys; a missing row has no cells. The returned memory belongs to the
	// caller.
	Get(ctx context.Context, keys []RowKey) ([]Row, error)
	// Mutate applies the mutations in order. When it returns nil they are
	// durable (a crash afterwards loses none of them). It may apply them
	// atomically (the embedded store does); callers rely on atomicity
	// across rows only where the store says so (AtomicMutator).
	Mutate(ctx context.Context, muts []Mutation) error
	// Scan calls fn for each non-empty row of table with start <= key < end
	// (a nil end means the end of the table), in key order. fn may keep the
	// Row. An error from fn stops the scan and is returned as is.
	Scan(ctx context.Context, table Table, start, end []byte, fn func(Row) error) error
	// Close releases the store. Calls after Close fail with ErrStore.
	Close() error
}

// AtomicMutator is a Store that can say whether its Mutate applies all
// of a call's mutations or none, even across a crash (the embedded store:
// one Pebble batch). The index then needs no read to tell a committed
// document from the cells an interrupted insert left (kvindex: the docs
// cell is the commit record), since an insert that is one Mutate call
// leaves none. A wrapper that forwards Mutate answers for the store under
// it; a Store that does not implement it is taken as not atomic.
type AtomicMutator interface {
	MutatesAtomically() bool
}

// UnorderedMutator is a Store that can apply mutations with no order
// among them faster than Mutate applies them in order: on HBase, Mutate
// sends one Multi per table one after another (each waits for its
// write-ahead-log sync), MutateUnordered sends them all at once. A crash
// (or an error) may leave any subset of the mutations applied; the
// caller orders what must be ordered by calling it, and Mutate, in turn.
// When it returns nil every mutation is durable, as with Mutate.
type UnorderedMutator interface {
	MutateUnordered(ctx context.Context, muts []Mutation) error
}
