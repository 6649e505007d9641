package hbasestore

import (
	"context"
	"fmt"

	"github.com/simdex/simdex/storage"
)

// DropHistory flushes table's memstores and then asks HBase to
// major-compact it (every region; the region servers run the compactions
// in the background). The data families keep NEW_VERSION_BEHAVIOR, under
// which every version and delete marker a rewrite leaves stays, in the
// memstore and then through flushes and minor compactions, and reads walk
// them all, until a major compaction; and a major compaction reaches only
// what was flushed. After simdex's compaction has folded an index row many
// times, lookups of it cost tens of milliseconds until then
// (benchmarks/2026-11-28-fold-history.md). The flush also tells a
// principal without the permission both need (ADMIN or CREATE on the
// table) that it lacks it: HBase refuses a flush over the wire but accepts
// a compaction request and refuses the compaction in the background.
func (s *Store) DropHistory(ctx context.Context, table storage.Table) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if !table.Valid() {
		return fmt.Errorf("%w: hbasestore: bad table %d", storage.ErrStore, table)
	}
	if err := s.c.Flush(ctx, s.tables[table]); err != nil {
		return s.wrap(ctx, fmt.Errorf("flush of %s: %w", s.tables[table], err))
	}
	if err := s.c.MajorCompact(ctx, s.tables[table]); err != nil {
		return s.wrap(ctx, fmt.Errorf("major compaction of %s: %w", s.tables[table], err))
	}
	return nil
}
