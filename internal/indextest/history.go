package indextest

import (
	"context"

	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// HistoryStore is the embedded store that also takes the requests to drop
// the history of rewritten cells which the HBase store serves
// (hbasestore.Store.DropHistory): for tests of when a fold asks. Asked
// records the tables asked for; Err is what each request returns.
type HistoryStore struct {
	*pebblestore.Store
	Asked []storage.Table
	Err   error
}

// DropHistory records the request.
func (h *HistoryStore) DropHistory(_ context.Context, t storage.Table) error {
	h.Asked = append(h.Asked, t)
	return h.Err
}
