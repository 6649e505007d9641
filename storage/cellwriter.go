package storage

import (
	"context"
	"time"
)

// CellPutter takes the cells of one table in strictly increasing (row,
// qualifier) order (rows compared bytewise, then qualifiers bytewise): the
// Put of a CellWriter, or of a writer of sorted files that are made part
// of a store otherwise (sstables ingested later).
type CellPutter interface {
	// Put adds one cell. Keys must strictly increase; a key out of order
	// is an error (a CellWriter then only accepts Abort).
	Put(row, qualifier, value []byte) error
}

// TimedCellPutter is a CellPutter that also takes a cell's version time,
// for stores that expire cells by age (HBase's family TTL counts from it),
// as Mutation.Timestamp carries it for a Put. The index puts its base-set
// cells through PutAt, stamped with their time bucket's start.
type TimedCellPutter interface {
	CellPutter
	// PutAt is Put with the cell's timestamp (zero: none).
	PutAt(row, qualifier, value []byte, ts time.Time) error
}

// CellWriter takes the cells of one table in strictly increasing (row,
// qualifier) order and makes them part of the store when committed. It is
// an optional write path for bulk writers that have sorted their cells
// themselves (the bulk loader): a store that offers it (the embedded store
// builds sorted string tables and ingests them) returns one from a method
// the bulk writer asks for with a type assertion; other stores take the
// same cells as Puts.
//
// A committed cell replaces a cell with the same key, as a Put does.
// Counters (Add) cannot be written this way. A CellWriter is used by one
// goroutine.
type CellWriter interface {
	CellPutter
	// Commit makes every cell put so far part of the store, atomically
	// and durably (a crash before Commit returns leaves none or all of
	// them). The writer cannot be used afterwards.
	Commit(ctx context.Context) error
	// Abort drops the cells and removes any temporary files.
	Abort() error
}
