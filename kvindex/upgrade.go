package kvindex

// Upgrading an index's format in place, where the newer format only adds
// rows that the older one's writers never touch.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/simdex/simdex/storage"
)

// UpgradeFormat raises the format of the index in st to FormatVersion
// where that needs no cell rewritten, and returns the format it found and
// the one it left. Format 7 becomes 8 by rewriting the meta row's format
// alone: format 8 only adds the counter shard rows, and sums the counters
// row that format 7 wrote into them, so every count stays. Processes that
// have the index open keep writing as they opened it (the counters row,
// still summed) until they open it again; a binary that knows only format
// 7 refuses it from then on. An index already at FormatVersion is left
// as it is; older formats are refused (ErrMetaMismatch: their
// documents lack cells format 8 keeps, so rebuild them by bulk load), as
// is a store without an index (ErrNoIndex).
func UpgradeFormat(ctx context.Context, st storage.Store) (from, to int, err error) {
	m, ok, err := ReadMeta(ctx, st)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, ErrNoIndex
	}
	switch m.Format {
	case FormatVersion:
		return m.Format, m.Format, nil
	case formatSources:
	default:
		return m.Format, m.Format, fmt.Errorf("%w: format %d cannot be upgraded in place to %d (only %d can): rebuild the index", ErrMetaMismatch, m.Format, FormatVersion, formatSources)
	}
	err = st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: qualFormat, Value: []byte(strconv.Itoa(FormatVersion))}})
	if err != nil {
		return m.Format, m.Format, storeErr(err)
	}
	return m.Format, FormatVersion, nil
}
