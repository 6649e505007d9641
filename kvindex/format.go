package kvindex

// The persisted format's versions, and the meta rows that depend on them
// (docs/FORMAT.md).

import "fmt"

// FormatVersion is the version of the persisted layout described in
// docs/FORMAT.md. It is stored in the meta table; an index written with
// a version this code does not know is refused. The versions:
//
//   - 1: no bands table; docs cells up to format 0x02.
//   - 2: 1 plus the bands table and docs cells of format 0x03 (an index
//     with bands recorded 2, so that a binary predating bands refused it
//     instead of leaving its band rows stale).
//   - 3: docs cells may be of format 0x04 (the normalized text of short
//     documents, for the decision rule's alignment clause); bands per the
//     meta row's bands value. Every new index records 3, so a binary that
//     cannot decode 0x04 cells refuses the index instead of failing on
//     single documents.
//   - 4: 3 plus text-key rows in the bands table (band index
//     fingerprint.TextKeyBand: the sentence and lead keys of short texts,
//     fingerprint.TextKeys) in an index with bands; its docs cells list
//     them after the 32 band hashes (m = 32 + keys) so a replace or delete
//     removes them; the meta row records textkeys =
//     fingerprint.TextKeysVersion. Every new index records 4, so a binary
//     that does not know text keys refuses it instead of leaving their
//     rows stale.
//   - 5: 4 plus compact cells for bare fingerprints: an fp cell without an
//     exact hash is of format 0x02 (the time alone, 9 bytes instead of
//     17), a docs cell without title fingerprint, exact hash, sketch,
//     length, bands and text of format 0x05 (the fingerprint and time, 16
//     bytes less). A bulk load of precomputed fingerprints writes only
//     those. Every new index records 5, so a binary that cannot decode
//     them refuses the index.
//   - 6: 5 plus text keys for every document with a band signature, not
//     only those under fingerprint.TextKeyChars: a longer one keeps its
//     lead, first and last sentences (fingerprint.DocTextKeys, at most
//     fingerprint.MaxTextKeys = 64: every sentence of a text of up to ~60
//     sentences, so docs cells list up to 32 + 64 hashes); the meta row
//     records textkeys = fingerprint.TextKeysVersion.
//     The rows of a longer document's last sentences are where a
//     signature, a list footer or a licence section shared by many
//     documents shows (the decision rule's template detection counts the
//     documents in a query's key rows). Every new index records 6, so a
//     binary that cannot decode the longer docs cells refuses the index.
//   - 7: 6 plus source-scoped text-key rows in the bands table (band
//     index SourceKeyBand, key SourceTextKey(source, text key)) for every
//     document whose attribute Config.SourceAttr names a source: the
//     number of a source's documents holding a sentence, from which the
//     decision rule learns a site's or a list's own template. The meta row
//     records sources = the attribute's name. Every new index records 7,
//     so a binary that does not know these rows refuses the index instead
//     of leaving them stale on a replace or delete.
//   - 8: 7 plus sharded counters: an insert group or a delete adds to one
//     of the CounterShards meta rows CounterShardRow(s), taken in turn
//     (a bulk load, which adds once, still adds to the row counters), and
//     the counters are the sum of all these rows. On HBase an Increment
//     reads every version of its cell HBase keeps (a NEW_VERSION_BEHAVIOR
//     family keeps them all, through flushes, until a major compaction),
//     so one row incremented by every insert group cost the region server more
//     with every group: half its handler CPU after a minute and a half of
//     insert-if-unique at ~800/s. Every new index records 8, so a binary
//     that reads the one row refuses the index instead of reporting part
//     of its counts.
//   - 9: 8 plus separate lock cells: a Locker that can keep its locks
//     apart from the data (storage.PlacedLocker; on HBase the meta table's
//     lock family, schema.LockFamily, whose reads do not walk a cell's
//     history) keeps them there. No cell of the index changes; every new
//     index records 9 so that a binary that locks in the data family
//     refuses it instead of taking locks the others cannot see.
//   - 10 (FormatWriterLease): 9 whose writers take turns: only the process
//     holding the store's writer lease (storage.WriterLeaser; on HBase one
//     cell of the meta table's lock family) writes, and an operation takes
//     no cross-process lock of its own. No cell of the index changes; the
//     format is recorded only by an index created with Config.WriterLease
//     or switched by SetWriterLease, so that a binary that would take
//     per-name locks beside the lease holder refuses it. A new index
//     records 9.
//
// UpgradeFormat raises an index of 7 or 8 to 9 in place. This code opens
// all nine. An index that records 1 to 8 keeps its version: no text (1,
// 2), no text keys (1-3), no compact cells (1-4), no text keys of longer
// documents (1-5), no source-scoped rows (1-6), no counter shards (1-7)
// are written into it and its locks stay in the data (1-8), so the
// binaries that wrote it can still read every cell and share its locks.
const FormatVersion = 9

// FormatWriterLease is the format of an index whose writers take turns
// under one writer lease (see FormatVersion; Config.WriterLease,
// SetWriterLease).
const FormatWriterLease = 10

// The formats of indexes created before the current one (see
// FormatVersion).
const (
	formatNoBands  = 1
	formatBands    = 2
	formatText     = 3
	formatTextKeys = 4
	formatCompact  = 5
	formatLongKeys = 6
	formatSources  = 7
	formatShards   = 8
)

// CounterShards is the number of meta rows (CounterShardRow) that
// inserts and deletes of an index of format 8 or later spread their counter
// additions over.
const CounterShards = 64

// CounterShardRow is the meta row key of counter shard s (0 <=
// s < CounterShards): "counters/" and s as two lowercase hex digits.
func CounterShardRow(s int) []byte {
	return fmt.Appendf([]byte("counters/"), "%02x", s)
}

// textKeysShortOnly is the text-key recipe an index of format 4 or 5
// records: keys of documents under fingerprint.TextKeyChars only.
const textKeysShortOnly = "sent10-lead16-max12-v1"
