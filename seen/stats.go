package seen

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/storage"
)

// UserStats is one user's share of the seen table.
type UserStats struct {
	User  string
	Items int64 // live items (distinct hashes in live buckets)
	Bytes int64 // row key + qualifier + value bytes of every cell
}

// Stats summarizes the seen table.
type Stats struct {
	Users int64
	Items int64
	// Bytes counts row key, qualifier and value bytes of every cell (the
	// logical size; the store's on-disk size after its own compression and
	// key-prefix sharing is smaller).
	Bytes        int64
	Cells        int64
	DeltaCells   int64 // marks not folded yet ('d' and 'e' cells)
	Tombstones   int64
	BytesPerItem float64
	// Fullest are the users with the most items, most first.
	Fullest []UserStats
}

// Stats scans the whole seen table: users, live items, bytes per item and
// the top fullest users.
func (s *Service) Stats(ctx context.Context, top int) (Stats, error) {
	var st Stats
	lo := s.liveFrom(s.cfg.Now())
	err := s.st.Scan(ctx, storage.TableSeen, nil, nil, func(r storage.Row) error {
		user, err := UserOf(r.Key)
		if err != nil {
			return corrupt(r.Key, nil, err)
		}
		v, err := decodeRow(r, lo, s.cfg.HashBits, false)
		if err != nil {
			return err
		}
		u := UserStats{User: user, Items: int64(v.items())}
		v.release()
		for _, c := range r.Cells {
			u.Bytes += int64(len(r.Key) + len(c.Qualifier) + len(c.Value))
			switch c.Qualifier[0] {
			case qualDelta, qualFPDel:
				st.DeltaCells++
			case qualTomb:
				st.Tombstones++
			}
		}
		st.Users++
		st.Items += u.Items
		st.Bytes += u.Bytes
		st.Cells += int64(len(r.Cells))
		if top > 0 {
			st.Fullest = append(st.Fullest, u)
			if len(st.Fullest) > 4*top+64 {
				st.Fullest = topUsers(st.Fullest, top)
			}
		}
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("seen: stats: %w", err)
	}
	st.Fullest = topUsers(st.Fullest, top)
	if st.Items > 0 {
		st.BytesPerItem = float64(st.Bytes) / float64(st.Items)
	}
	return st, nil
}

func topUsers(u []UserStats, n int) []UserStats {
	slices.SortFunc(u, func(a, b UserStats) int {
		return cmp.Or(cmp.Compare(b.Items, a.Items), cmp.Compare(a.User, b.User))
	})
	if len(u) > n {
		u = u[:n]
	}
	return u
}
