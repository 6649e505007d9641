package storage

import "context"

// CellWriter takes the cells of one table in strictly increasing (row,
// qualifier) order (rows compared bytewise, then qualifiers bytewise) and
// makes them part of the store when committed. It is an optional write
// path for bulk writers that have sorted their cells themselves (the bulk
// loader): a store that offers it (the embedded store builds sorted string
// tables and ingests them) returns one from a method the bulk writer asks
// for with a type assertion; other stores take the same cells as Puts.
//
// A committed cell replaces a cell with the same key, as a Put does.
// Counters (Add) cannot be written this way. A CellWriter is used by one
// goroutine.
type CellWriter interface {
	// Put adds one cell. Keys must strictly increase; a key out of order
	// is an error (the writer then only accepts Abort).
	Put(row, qualifier, value []byte) error
	// Commit makes every cell put so far part of the store, atomically
	// and durably (a crash before Commit returns leaves none or all of
	// them). The writer cannot be used afterwards.
	Commit(ctx context.Context) error
	// Abort drops the cells and removes any temporary files.
	Abort() error
}
