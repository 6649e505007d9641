package seen

import (
	"context"
	"fmt"

	"github.com/simdex/simdex/storage"
)

// User reads one user's row: the user's live items and the bytes of the
// row's cells, as Stats counts them. A user without a row has seen
// nothing. Item ids are kept as hashes, so a seen set cannot list them
// (Check tells whether given ids were seen).
func (s *Service) User(ctx context.Context, user string) (UserStats, error) {
	if err := checkID(user, true); err != nil {
		return UserStats{}, err
	}
	key := RowKey(user)
	rows, err := s.st.Get(ctx, []storage.RowKey{{Table: storage.TableSeen, Key: key}})
	if err != nil {
		return UserStats{}, fmt.Errorf("seen: reading: %w", err)
	}
	r := rows[0]
	v, err := decodeRow(r, s.liveFrom(s.cfg.Now()), s.cfg.HashBits, false)
	if err != nil {
		return UserStats{}, err
	}
	u := UserStats{User: user, Items: int64(v.items())}
	v.release()
	for _, c := range r.Cells {
		u.Bytes += int64(len(r.Key) + len(c.Qualifier) + len(c.Value))
	}
	return u, nil
}
