package seen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/internal/defaults"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// Sentinel errors. Every error the package returns wraps one of these, a
// store or kvindex error (storage.ErrStore, kvindex.ErrCorrupt,
// kvindex.ErrBadID from document lookups) or a context error.
var (
	// ErrConfig: an invalid Config.
	ErrConfig = errors.New("seen: bad config")
	// ErrBadUser: a user id that is empty, longer than MaxIDBytes, not UTF-8,
	// holds control characters or '/'.
	ErrBadUser = errors.New("seen: bad user id")
	// ErrBadItem: an item (or document) id that is empty, longer than
	// MaxIDBytes, not UTF-8 or holds control characters.
	ErrBadItem = errors.New("seen: bad item id")
	// ErrTooMany: more items, candidates or users in one call than the
	// configured limits allow.
	ErrTooMany = errors.New("seen: too many items")
	// ErrBadK: a near-duplicate distance outside 0..Config.MaxK.
	ErrBadK = errors.New("seen: bad distance k")
	// ErrMetaMismatch: the store's seen table was written with another hash
	// width, bucket width or format version.
	ErrMetaMismatch = errors.New("seen: metadata mismatch")
)

// Defaults.
const (
	DefaultRetention    = 30 * 24 * time.Hour
	DefaultBucketWidth  = 24 * time.Hour
	DefaultHashBits     = 40
	DefaultMaxItems     = 1000
	DefaultMaxUsers     = 100
	DefaultMaxK         = 8
	DefaultMaxCellBytes = 64 << 10
	DefaultBatchRows    = 512
	// MaxIDBytes bounds user and item ids (as kvindex.MaxIDBytes does
	// document ids).
	MaxIDBytes = kvindex.MaxIDBytes
)

// Docs resolves document ids to their fingerprints (IndexDocs reads them
// from the index's docs table). found[i] is false for an unknown id.
type Docs interface {
	Fingerprints(ctx context.Context, ids []string) (fps []fingerprint.Fingerprint, found []bool, err error)
}

// NearPair is a candidate and a fingerprint the user has seen within the
// filter's K of the candidate's.
type NearPair struct {
	// DocID is the candidate's document ("" for a candidate given by its
	// fingerprint alone).
	DocID string
	// Fingerprint is the candidate's fingerprint; Seen the seen one.
	Fingerprint, Seen fingerprint.Fingerprint
	Distance          int
}

// NearJudge decides which near pairs are duplicates, as a check would (the
// server's is package detect's decision over the index): confirmed[i]
// answers pairs[i].
type NearJudge interface {
	ConfirmNear(ctx context.Context, pairs []NearPair) (confirmed []bool, err error)
}

// Config configures a Service. Zero fields take their defaults.
type Config struct {
	// Retention is how long a mark is remembered: at least Retention, at
	// most Retention + BucketWidth (default 30 days). Changing it is safe.
	Retention time.Duration
	// BucketWidth is the width of a time bucket, a whole number of seconds
	// (default 1 day). It is fixed when the seen table is first written.
	BucketWidth time.Duration
	// HashBits is the width of the per-user item hashes kept (32..64,
	// default 40). A check of an absent id answers "seen" with probability
	// at most n/2^HashBits for a user with n items (1000 items at 40 bits:
	// 9.1e-10). Fixed when the seen table is first written.
	HashBits int
	// MaxItems bounds the ids, marks or candidates of one user in one call
	// (default 1000).
	MaxItems int
	// MaxUsers bounds the users of one batch call (default 100).
	MaxUsers int
	// MaxK is the largest near-duplicate distance a filter may ask for
	// (default 8, at most 32).
	MaxK int
	// MaxCellBytes bounds one folded cell (default 64 KiB): larger bucket
	// sets are cut into chunks.
	MaxCellBytes int
	// BatchRows is the number of rows a fold run reads per scan batch
	// (default 512).
	BatchRows int
	// Locker makes folds of one user exclusive across processes sharing the
	// store (the HBase store's lease locker); nil for the embedded store,
	// which only one process opens.
	Locker storage.Locker
	// Docs looks up fingerprints of marks and candidates given by document
	// id (nil: document ids are refused).
	Docs Docs
	// Near, when set, confirms a filter's near-duplicates: a candidate is
	// dropped as near only when a seen fingerprint within K of it makes a
	// pair Near confirms, so the filter drops what a check would call a
	// duplicate (nil: the distance alone decides).
	Near NearJudge
	// AdoptStored makes Open take HashBits and BucketWidth from the seen
	// table's metadata when it has some (admin tools reading an existing
	// table), instead of refusing a mismatch.
	AdoptStored bool
	// Now is the clock (default time.Now; tests use a fake one).
	Now func() time.Time
	// Logger receives fold summaries (default: discard).
	Logger *slog.Logger
	// Registerer receives the package's metrics (nil: not registered).
	Registerer prometheus.Registerer
	// KeepStoreHistory leaves the store's own compaction alone. By
	// default a FoldAll that folded rows asks a store that keeps the
	// history of rewritten cells until told (HBase: every version and
	// delete marker until a major compaction, walked by every read) to
	// drop the seen table's: a flush and a major compaction.
	KeepStoreHistory bool
}

func (c Config) withDefaults() Config {
	defaults.Set(&c.Retention, DefaultRetention)
	defaults.Set(&c.BucketWidth, DefaultBucketWidth)
	defaults.Set(&c.HashBits, DefaultHashBits)
	defaults.Set(&c.MaxItems, DefaultMaxItems)
	defaults.Set(&c.MaxUsers, DefaultMaxUsers)
	defaults.Set(&c.MaxK, DefaultMaxK)
	defaults.Set(&c.MaxCellBytes, DefaultMaxCellBytes)
	defaults.Set(&c.BatchRows, DefaultBatchRows)
	if c.Now == nil {
		c.Now = time.Now
	}
	defaults.Logger(&c.Logger)
	return c
}

// Validate reports the first invalid field of c (after defaults).
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.BucketWidth < time.Second || c.BucketWidth%time.Second != 0:
		return bad("bucket width %v: want a whole number of seconds, at least 1s", c.BucketWidth)
	case c.Retention < c.BucketWidth:
		return bad("retention %v shorter than the bucket width %v", c.Retention, c.BucketWidth)
	case c.Retention/c.BucketWidth > 10000:
		return bad("retention %v spans more than 10000 buckets of %v", c.Retention, c.BucketWidth)
	case c.HashBits < 32 || c.HashBits > 64:
		return bad("hash bits %d: want 32..64", c.HashBits)
	case c.MaxItems < 1 || c.MaxItems > 100000:
		return bad("max items %d: want 1..100000", c.MaxItems)
	case c.MaxUsers < 1 || c.MaxUsers > 10000:
		return bad("max users %d: want 1..10000", c.MaxUsers)
	case c.MaxK < 0 || c.MaxK > 32:
		return bad("max k %d: want 0..32", c.MaxK)
	case c.MaxCellBytes < storage.MinCellBytes+16 || c.MaxCellBytes > 8<<20:
		return bad("max cell bytes %d: want %d..%d", c.MaxCellBytes, storage.MinCellBytes+16, 8<<20)
	case c.BatchRows < 1 || c.BatchRows > 1<<20:
		return bad("batch rows %d: want 1..2^20", c.BatchRows)
	}
	return nil
}

// TTL is the HBase TTL the seen table needs for this configuration:
// Retention plus one bucket (schema.Schema.SeenTTL).
func (c Config) TTL() time.Duration {
	c = c.withDefaults()
	return c.Retention + c.BucketWidth
}
