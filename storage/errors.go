package storage

import "errors"

// ErrStore is wrapped by every failure of a Store (down, closed, I/O
// error): retrying later may succeed. Context errors are kept matchable
// beside it.
var ErrStore = errors.New("storage: store unavailable")

// ErrDenied is wrapped, beside ErrStore, by a failure that is the store
// refusing this process's identity the operation (on HBase, an
// AccessDeniedException: the principal lacks a permission). Retrying does
// not help until an operator grants it, so a caller that tells the two
// apart answers it as a fault of its own set-up, not as an outage.
var ErrDenied = errors.New("storage: permission denied")

// ErrNotWriter is wrapped, beside ErrStore, by a write refused because
// another process holds the store's writer lease (WriterLeaser): the write
// succeeds on the holder, or here once this process takes the lease over.
var ErrNotWriter = errors.New("storage: not the writer")

// NotWriterError is the error of a write refused because another process
// holds the store's writer lease. It matches ErrStore and ErrNotWriter,
// and says who holds the lease and where that process takes writes, so
// that a server can send the write there instead of refusing it.
type NotWriterError struct {
	// Holder names the process holding the lease (host:pid), "" when not
	// known (no holder read yet).
	Holder string
	// URL is where the holder takes writes, as it advertised in the lease
	// ("" when it advertised none or the holder is not known).
	URL string
	// Reason says why this process does not write, for messages.
	Reason string
}

func (e *NotWriterError) Error() string {
	return ErrStore.Error() + " (" + ErrNotWriter.Error() + "): " + e.Reason
}

// Unwrap makes the error match ErrStore and ErrNotWriter.
func (e *NotWriterError) Unwrap() []error { return []error{ErrStore, ErrNotWriter} }
