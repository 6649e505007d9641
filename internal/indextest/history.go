package indextest

import (
	"context"
	"errors"

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

// HistoryCase is one configuration of a fold that rewrote rows of Table,
// and what it must do with a HistoryStore: ask for the tables in
// WantAsked and report WantState as its store compaction.
type HistoryCase struct {
	Name      string
	Keep      bool  // the fold's Config.KeepStoreHistory
	Err       error // what the store's request returns
	WantAsked []storage.Table
	WantState string
}

// HistoryCases are the cases every folder of table runs: asked once and
// "requested"; not asked with KeepStoreHistory; asked and "failed" when
// the request fails (the fold's own outcome stands).
func HistoryCases(table storage.Table) []HistoryCase {
	return []HistoryCase{
		{Name: "drop", WantAsked: []storage.Table{table}, WantState: "requested"},
		{Name: "keep", Keep: true},
		{Name: "failed", Err: errors.New("region server down"), WantAsked: []storage.Table{table}, WantState: "failed"},
	}
}
