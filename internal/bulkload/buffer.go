package bulkload

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
)

// The cell kinds, in the order the merge phase writes them when order
// matters (IndexFirst): fp cells, then band cells, then the docs cells, so
// that no document is visible before it can be found.
const (
	cellFP = iota
	cellBand
	cellDoc
	numCellKinds
)

// cellKinds name the cell runs of the fp, bands and docs tables. A band
// cell's run value is its time bucket (4 bytes, big-endian), which becomes
// the cell's timestamp; the stored value is empty, as an insert writes it.
var cellKinds = [numCellKinds]string{"fpcells", "bandcells", "doccells"}

// cellTables are the tables of the cell kinds.
var cellTables = [numCellKinds]storage.Table{storage.TableFP, storage.TableBands, storage.TableDocs}

// cellBytesPerRecord is the arena space each of the two cell buffers gets
// per record of the spill buffers' capacity (an fp cell of a short id is
// ~30 bytes, a docs cell without attributes ~45).
const cellBytesPerRecord = 48

// bandCellBytes is the arena space the band-cell buffer gets per band cell
// of its capacity: the 9-byte row, the id (up to 19 bytes within this
// budget) and the 4-byte bucket.
const bandCellBytes = 32

// bufferCap is the number of records a spill holds: three quarters of the
// memory bound (less the store's share) over what one record takes in the
// two sets of spill buffers (spillAsync) and the sort scratch. Per set:
// entryKinds entries of 16 bytes and two cells (a reference and arena
// bytes, with an eighth of slack); with band cells, NumBands more cells of
// bandCellBytes (a text document's band cells outweigh all the rest, so a
// text load into an index with bands spills about eight times as often).
// The scratch, once: a radix-sort entry and a cell-sort reference (and
// NumBands band-cell references) per spill worker. The rest (three batches
// of input in flight, the MSD sort's 512 KiB of bucket counts, the
// runtime) does not grow with the bound and fits in the remaining quarter.
func (l *loader) bufferCap() int {
	if l.cfg.spillEvery > 0 {
		return l.cfg.spillEvery + l.cfg.BatchDocs
	}
	w := int64(l.spillWorkers())
	ref := int64(unsafe.Sizeof(cellRef{}))
	set := int64(16*l.entryKinds()) + 2*ref + 2*cellBytesPerRecord*9/8
	scratch := w * (16 + ref)
	if l.bandCells {
		set += fingerprint.NumBands * (ref + bandCellBytes*9/8)
		scratch += w * fingerprint.NumBands * ref
	}
	return int((l.cfg.Memory - l.cfg.StoreMemory) * 3 / 4 / (2*set + scratch))
}

// spillBufs is one set of spill buffers: the entry buffers (entryKinds)
// and the cell buffers.
type spillBufs struct {
	bufs  [][]entry
	cells [numCellKinds]cellBuf
}

// newSpillBufs makes a set of spill buffers of capN records.
func (l *loader) newSpillBufs(capN int) *spillBufs {
	b := &spillBufs{bufs: make([][]entry, l.entryKinds())}
	for i := range b.bufs {
		b.bufs[i] = make([]entry, 0, capN)
	}
	for i := range b.cells {
		refs, arena := capN, capN*cellBytesPerRecord
		if i == cellBand {
			refs, arena = 0, 0
			if l.bandCells {
				refs, arena = capN*fingerprint.NumBands, capN*fingerprint.NumBands*bandCellBytes
			}
		}
		b.cells[i] = cellBuf{arena: make([]byte, 0, arena+arena/8), refs: make([]cellRef, 0, refs), maxRefs: refs, maxArena: arena}
	}
	return b
}

// empty reports whether b holds no entry and no cell.
func (b *spillBufs) empty() bool {
	for _, e := range b.bufs {
		if len(e) > 0 {
			return false
		}
	}
	for _, c := range b.cells {
		if len(c.refs) > 0 {
			return false
		}
	}
	return true
}

// nearlyFull reports whether a buffer could overflow with the next batch:
// the spill buffers are spilled before it is committed.
func (l *loader) nearlyFull(capN int) bool {
	for _, b := range l.bufs {
		if len(b)+l.cfg.BatchDocs > capN {
			return true
		}
	}
	for i, c := range l.cells {
		perDoc := 1
		if i == cellBand {
			// A text adds up to MaxTextKeys text-key cells: spill
			// before the buffer would grow past its sized capacity.
			perDoc = fingerprint.NumBands + fingerprint.MaxTextKeys
		}
		if len(c.refs) > 0 && (len(c.refs)+perDoc*l.cfg.BatchDocs > c.maxRefs || len(c.arena) >= c.maxArena) {
			return true
		}
	}
	return false
}

// entryKinds is the number of entry buffers (and runs per spill): one per
// index table, the ids, and the fps when the checkpoint has them.
func (l *loader) entryKinds() int {
	if l.cp.FPRuns {
		return l.T + 2
	}
	return l.T + 1
}

// docQualifier is the docs cell's qualifier, as bytes.
var docQualifier = []byte(kvindex.DocQualifier)

// commitBatch writes the rejects of a processed batch and buffers its
// records' index entries and cells.
func (l *loader) commitBatch(ctx context.Context, batch []item, file string) error {
	buckets := l.ix.Buckets()
	for i := range batch {
		it := &batch[i]
		if it.err != nil {
			if err := l.rejectLine(file, it.line, it.err); err != nil {
				return err
			}
			continue
		}
		if err := l.bufferRecord(it, buckets.Of(it.rec.at)); err != nil {
			return err
		}
	}
	if err := l.rejW.Flush(); err != nil {
		return fmt.Errorf("bulkload: rejects file: %w", err)
	}
	return ctx.Err()
}

// bufferRecord counts a good record and buffers its index entries of the
// rows this shard writes (rowShard) and, when this shard owns its
// fingerprint (docShard), its id hash, fingerprint and cells.
func (l *loader) bufferRecord(it *item, bucket uint32) error {
	l.cp.Records++
	l.pRecords.Add(1)
	fp := it.rec.fp
	for t, p := range l.perms {
		v := p.Permute(fp)
		if l.rowShard(t, v) == l.cfg.Shard {
			l.bufs[t] = append(l.bufs[t], entry{key: v, aux: bucket})
		}
	}
	switch {
	case !it.owned:
		return nil
	case it.fast:
		l.bufferID(xxhash.Sum64(it.id), fp)
		var row [8]byte
		binary.BigEndian.PutUint64(row[:], uint64(fp))
		l.cells[cellFP].add(row[:], it.id, it.vals[:it.fpLen])
		l.cells[cellDoc].add(it.id, docQualifier, it.vals[it.fpLen:])
		return nil
	}
	l.bufferID(xxhash.Sum64String(it.rec.id), fp)
	return l.bufferMutations(it.muts, bucket)
}

// bufferID buffers an owned record's id hash and, when the checkpoint
// keeps fps runs, its fingerprint: phase 3 counts them.
func (l *loader) bufferID(idHash uint64, fp fingerprint.Fingerprint) {
	l.bufs[l.T] = append(l.bufs[l.T], entry{key: idHash})
	if l.cp.FPRuns {
		l.bufs[l.T+1] = append(l.bufs[l.T+1], entry{key: uint64(fp)})
	}
}

// bufferMutations buffers a document's fp, band and docs cells, given as
// the mutations an online insert would apply (kvindex.BulkWriter.DocCells).
func (l *loader) bufferMutations(muts []storage.Mutation, bucket uint32) error {
	for _, m := range muts {
		switch {
		case m.Kind == storage.Put && m.Table == storage.TableFP:
			l.cells[cellFP].add(m.Row, m.Qualifier, m.Value)
		case m.Kind == storage.Put && m.Table == storage.TableBands:
			// The run value is the bucket (the cell's timestamp);
			// the band cell itself is empty.
			if !l.bandCells {
				return fmt.Errorf("bulkload: band cells from input not expected to hold text")
			}
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], bucket)
			l.cells[cellBand].add(m.Row, m.Qualifier, b[:])
		case m.Kind == storage.Put && m.Table == storage.TableDocs:
			l.cells[cellDoc].add(m.Row, m.Qualifier, m.Value)
		default:
			return fmt.Errorf("bulkload: unexpected document mutation %d of table %s", m.Kind, m.Table)
		}
	}
	return nil
}
