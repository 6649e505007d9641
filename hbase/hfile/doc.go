// Package hfile writes (and, for checking, reads) Apache HBase store files:
// HFile format version 3 (minor version 3) as HBase 2.x reads it, so that a
// bulk loader can hand finished files to the region servers (HBase's
// bulk-load path: no memstore, no WAL, no per-cell RPC work).
//
// What the writer produces is what HBase's own bulk-load writer
// (HFileOutputFormat2 over StoreFileWriter) produces with data block
// encoding NONE, compression NONE and no Bloom filter: one family's cells
// of type Put, in HBase's key order, each with an explicit timestamp. The
// region servers read such files as they are; the family's
// DATA_BLOCK_ENCODING (FAST_DIFF) and COMPRESSION (SNAPPY) apply when a
// compaction rewrites them, and the ROW Bloom filter too: until a
// compaction has rewritten an imported file, point reads of rows that are
// not in it read its index and one data block instead of being skipped by
// the Bloom filter (the file's time range and key range still skip it for
// reads outside them). The region servers compact imported files like any
// others: a store that has reached hbase.hstore.compactionThreshold (3)
// files is compacted soon after the import (the bulk loader's index table,
// one file per permutation table, is), a single file at the next periodic
// major compaction or by hand (major_compact in the HBase shell).
//
// # File layout (all integers big-endian)
//
//	data blocks          "DATABLK*" blocks of KeyValues, ~BlockSize each
//	root data index      one "IDXROOT2" block (single-level index)
//	meta index           one empty "IDXROOT2" block (no meta blocks)
//	file info            one "FILEINF2" block
//	trailer              4096 bytes, last 4 = version
//
// Every block is a 33-byte header, the block's bytes, then its checksums:
//
//	0  8  magic (block type)
//	8  4  on-disk size without header (bytes + checksums)
//	12 4  uncompressed size without header (bytes)
//	16 8  offset of the previous block of the same type, or -1
//	24 1  checksum type: 2 = CRC32C
//	25 4  bytes per checksum chunk (16384)
//	29 4  on-disk data size with header (33 + bytes)
//	33 .. the block's bytes
//	   .. one 4-byte CRC32C per chunk of bytesPerChecksum bytes of
//	      header+bytes (the last chunk may be shorter)
//
// A data block's bytes are KeyValues back to back:
//
//	4  key length
//	4  value length
//	.. key: 2 row length, row, 1 family length, family, qualifier,
//	   8 timestamp (ms), 1 type (4 = Put)
//	.. value
//	2  tags length (always 0: the file declares tags, hfile.MAX_TAGS_LEN=0)
//	1  memstore timestamp as a Hadoop vlong (always 0, one byte: the file
//	   declares KEY_VALUE_VERSION=1 and MAX_MEMSTORE_TS_KEY=0)
//
// The root index block holds one entry per data block, in order:
//
//	8  block offset in the file
//	4  block on-disk size with header
//	.. the block's first key (the key bytes above) as a Hadoop vint
//	   length and the bytes
//
// The file info block is the 4 bytes "PBUF" then a varint-delimited
// FileInfoProto (repeated BytesBytesPair map_entry = 1) with: hfile.LASTKEY,
// hfile.AVG_KEY_LEN (4), hfile.AVG_VALUE_LEN (4), hfile.CREATE_TIME_TS (8),
// hfile.MAX_TAGS_LEN (4), hfile.TAGS_COMPRESSED (1), MAX_MEMSTORE_TS_KEY (8),
// KEY_VALUE_VERSION (4), BULKLOAD_TIMESTAMP (8), BULKLOAD_SOURCE_TASK (the
// task name), MAJOR_COMPACTION_KEY (1, true), EXCLUDE_FROM_MINOR_COMPACTION
// (1, false), TIMERANGE ("PBUF" + TimeRangeTracker{from=1, to=2}) and
// EARLIEST_PUT_TS (8). No MAX_SEQ_ID_KEY: like HBase's own bulk-load writer,
// the sequence id comes from the name the region server gives the file when
// it imports it with assign_seq_num.
//
// The trailer is the magic "TRABLK\"$", a varint-delimited FileTrailerProto
// (file info offset, load-on-open offset = root index offset, index sizes
// and counts, entry count, 1 index level, first and last data block offsets,
// comparator org.apache.hadoop.hbase.CellComparatorImpl, compression 2 =
// NONE), zero padding to 4092 bytes, then the version int 0x03000003
// (minor 3 in the top byte, major 3 in the low three).
//
// The index is single-level: HBase's writer would add leaf index blocks once
// the root passes 128 KiB (about 3,000 data blocks, ~190 MiB of cells); its
// reader takes a larger single-level root as it is. Writer.Config.MaxBytes
// lets the caller roll to a new file before that.
package hfile
