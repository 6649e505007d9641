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
// the one it left. Formats 7 and 8 become 9 by rewriting the meta row's
// format alone: format 8 only adds the counter shard rows, and sums the
// counters row that format 7 wrote into them, so every count stays;
// format 9 only moves the lock cells (on HBase into the meta table's lock
// family, which the caller adds first: hbasestore.AddLockFamily), which no
// lock holds between operations. Moving the locks is why the processes
// that write to the index must be stopped first: one that opened it
// before keeps locking where format 8 did, where those that open it after
// do not look. A binary that knows only an older format refuses it from
// then on. prepare, when not nil, runs once the index was found
// upgradable and before its format is rewritten (the HBase store adds its
// lock family there); its error stops the upgrade. An index already at
// FormatVersion is left as it is; older
// formats are refused (ErrMetaMismatch: their documents lack cells format
// 8 keeps, so rebuild them by bulk load), as is a store without an index
// (ErrNoIndex).
func UpgradeFormat(ctx context.Context, st storage.Store, prepare func(ctx context.Context, from int) error) (from, to int, err error) {
	m, ok, err := ReadMeta(ctx, st)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, ErrNoIndex
	}
	switch m.Format {
	case FormatVersion, FormatWriterLease:
		return m.Format, m.Format, nil
	case formatSources, formatShards:
	default:
		return m.Format, m.Format, fmt.Errorf("%w: format %d cannot be upgraded in place to %d (only %d and %d can): rebuild the index", ErrMetaMismatch, m.Format, FormatVersion, formatSources, formatShards)
	}
	if prepare != nil {
		if err := prepare(ctx, m.Format); err != nil {
			return m.Format, m.Format, err
		}
	}
	err = st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: qualFormat, Value: []byte(strconv.Itoa(FormatVersion))}})
	if err != nil {
		return m.Format, m.Format, storeErr(err)
	}
	return m.Format, FormatVersion, nil
}

// SetWriterLease makes the index in st one whose writers take turns under
// one writer lease (on: format 10, FormatWriterLease) or one whose writers
// share per-operation locks (off: format 9), and returns the format it
// found and the one it left. Only the meta row's format changes, but the
// way writers exclude each other does: every process that writes to the
// index must be stopped first (one that opened it before would keep the
// old way beside those that open it after). An index older than 9 is
// refused (ErrMetaMismatch: UpgradeFormat raises it first), as is a store
// without an index (ErrNoIndex).
func SetWriterLease(ctx context.Context, st storage.Store, on bool) (from, to int, err error) {
	m, ok, err := ReadMeta(ctx, st)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, ErrNoIndex
	}
	to = FormatVersion
	if on {
		to = FormatWriterLease
	}
	switch m.Format {
	case to:
		return m.Format, m.Format, nil
	case FormatVersion, FormatWriterLease:
	default:
		return m.Format, m.Format, fmt.Errorf("%w: format %d: the writer lease needs format %d or %d (upgrade the index first)", ErrMetaMismatch, m.Format, FormatVersion, FormatWriterLease)
	}
	err = st.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableMeta, Row: metaRow, Qualifier: qualFormat, Value: []byte(strconv.Itoa(to))}})
	if err != nil {
		return m.Format, m.Format, storeErr(err)
	}
	return m.Format, to, nil
}
