package storage

import "errors"

// ErrStore is wrapped by every failure of a Store (down, closed, I/O
// error): retrying later may succeed. Context errors are kept matchable
// beside it.
var ErrStore = errors.New("storage: store unavailable")
