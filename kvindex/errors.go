package kvindex

import (
	"errors"
	"fmt"
	"github.com/simdex/simdex/storage"
)

// Sentinel errors. Every error the package returns wraps one of these (or a
// context error), so callers branch with errors.Is.
var (
	// ErrNotFound: no document has the id.
	ErrNotFound = errors.New("kvindex: not found")
	// ErrBadK: a distance outside 0..Layout.K.
	ErrBadK = errors.New("kvindex: bad distance k")
	// ErrBadOptions: lookup options out of range (negative limit, a time
	// window that ends before it starts).
	ErrBadOptions = errors.New("kvindex: bad lookup options")
	// ErrBadID: a document id that is empty, longer than MaxIDBytes, not
	// UTF-8 or holds control characters.
	ErrBadID = errors.New("kvindex: bad document id")
	// ErrBadDocument: a document that cannot be stored (e.g. attributes over
	// their limits, or an id repeated in one batch).
	ErrBadDocument = errors.New("kvindex: bad document")
	// ErrMetaMismatch: the store holds an index made with another layout,
	// recipe version, bucket width or format version.
	ErrMetaMismatch = errors.New("kvindex: index metadata mismatch")
	// ErrNoIndex: the store holds no index, and Config.NoCreate forbids
	// creating one.
	ErrNoIndex = errors.New("kvindex: the store holds no index")
	// ErrCorrupt: a stored cell cannot be decoded. The wrapping error names
	// the table, row and cell.
	ErrCorrupt = errors.New("kvindex: corrupt cell")
	// ErrStore: the store failed (down, closed, I/O error). Retrying later may
	// succeed. It is storage.ErrStore, which stores wrap their failures
	// with.
	ErrStore = storage.ErrStore
	// ErrDenied: the store refused this process the operation (on HBase,
	// a missing permission); it comes with ErrStore. It is
	// storage.ErrDenied.
	ErrDenied = storage.ErrDenied
	// ErrNotWriter: a write refused because another process holds the
	// store's writer lease (an index of format 10); it comes with ErrStore.
	// It is storage.ErrNotWriter.
	ErrNotWriter = storage.ErrNotWriter
	// ErrClosed: the index was closed.
	ErrClosed = errors.New("kvindex: index closed")
)

// CorruptError describes an undecodable cell. It wraps ErrCorrupt.
type CorruptError struct {
	Table     storage.Table
	Row       []byte
	Qualifier []byte
	Reason    string
}

// Error names the table, row and cell in hex so an operator can find them.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("kvindex: corrupt cell in table %s row %x qualifier %x: %s", e.Table, e.Row, e.Qualifier, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func corrupt(t storage.Table, row, qual []byte, format string, args ...any) error {
	return &CorruptError{Table: t, Row: append([]byte(nil), row...), Qualifier: append([]byte(nil), qual...), Reason: fmt.Sprintf(format, args...)}
}
