package hfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrOrder: a cell's key is not greater than the previous one's.
	ErrOrder = errors.New("hfile: cells out of order")
	// ErrInvalid: a cell or a configuration the format cannot hold.
	ErrInvalid = errors.New("hfile: invalid argument")
	// ErrEmpty: Close of a writer that got no cells (an import of an empty
	// file is pointless, so the writer refuses to make one).
	ErrEmpty = errors.New("hfile: no cells")
	// ErrCorrupt: a file the reader cannot parse.
	ErrCorrupt = errors.New("hfile: corrupt file")
	// ErrClosed: a call on a writer after Close (or after an error).
	ErrClosed = errors.New("hfile: writer closed")
)

// Format constants (see the package comment).
const (
	majorVersion     = 3
	minorVersion     = 3
	headerSize       = 33
	trailerSize      = 4096
	checksumCRC32C   = 2
	compressionNone  = 2 // Compression.Algorithm.NONE's ordinal
	typePut          = 4
	comparatorClass  = "org.apache.hadoop.hbase.CellComparatorImpl"
	defaultBlockSize = 64 << 10
	defaultChunk     = 16 << 10
)

// Block magics.
var (
	magicData     = []byte("DATABLK*")
	magicRoot     = []byte("IDXROOT2")
	magicFileInfo = []byte("FILEINF2")
	magicTrailer  = []byte("TRABLK\"$")
	pbMagic       = []byte("PBUF")
)

// File info keys (HFileInfo, HStoreFile, HFileWriterImpl).
const (
	KeyLastKey        = "hfile.LASTKEY"
	KeyAvgKeyLen      = "hfile.AVG_KEY_LEN"
	KeyAvgValueLen    = "hfile.AVG_VALUE_LEN"
	KeyCreateTime     = "hfile.CREATE_TIME_TS"
	KeyMaxTagsLen     = "hfile.MAX_TAGS_LEN"
	KeyTagsCompressed = "hfile.TAGS_COMPRESSED"
	KeyMaxMemstoreTS  = "MAX_MEMSTORE_TS_KEY"
	KeyKVVersion      = "KEY_VALUE_VERSION"
	KeyBulkLoadTime   = "BULKLOAD_TIMESTAMP"
	KeyBulkLoadTask   = "BULKLOAD_SOURCE_TASK"
	KeyMajorCompacted = "MAJOR_COMPACTION_KEY"
	KeyExcludeMinor   = "EXCLUDE_FROM_MINOR_COMPACTION"
	KeyTimeRange      = "TIMERANGE"
	KeyEarliestPutTS  = "EARLIEST_PUT_TS"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Config configures a Writer.
type Config struct {
	// BlockSize is the data block size to aim for (a block is closed once
	// it holds at least this many bytes). Default 64 KiB, HBase's.
	BlockSize int
	// BytesPerChecksum is the checksum chunk size. Default 16 KiB.
	BytesPerChecksum int
	// Task names the writer in the file info (BULKLOAD_SOURCE_TASK).
	// Default "simdex-bulkload".
	Task string
	// Now is the creation and bulk-load time written into the file info.
	// Default time.Now().
	Now time.Time
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.BlockSize == 0 {
		c.BlockSize = defaultBlockSize
	}
	if c.BytesPerChecksum == 0 {
		c.BytesPerChecksum = defaultChunk
	}
	if c.Task == "" {
		c.Task = "simdex-bulkload"
	}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	return c
}

// Validate reports a configuration the writer cannot use.
func (c Config) Validate() error {
	switch {
	case c.BlockSize < 1 || c.BlockSize > 64<<20:
		return fmt.Errorf("%w: BlockSize %d not in [1, 64 MiB]", ErrInvalid, c.BlockSize)
	case c.BytesPerChecksum < 512 || c.BytesPerChecksum > 1<<30:
		return fmt.Errorf("%w: BytesPerChecksum %d not in [512, 1 GiB]", ErrInvalid, c.BytesPerChecksum)
	}
	return nil
}

// Cell is one Put cell.
type Cell struct {
	Row, Family, Qualifier []byte
	// Timestamp in milliseconds since the epoch (HBase's cell version).
	Timestamp int64
	Value     []byte
}

// indexEntry is one root index entry.
type indexEntry struct {
	offset int64
	size   int32 // on-disk size with header
	key    []byte
}

// Writer writes one HFile to an io.Writer. Cells must come in HBase's key
// order: row, then family, then qualifier (each bytewise), then timestamp
// descending; a key may not repeat. A Writer is used by one goroutine.
type Writer struct {
	cfg Config
	out *bufio.Writer
	pos int64
	err error // sticky: the first failure; later calls return it

	block      []byte // the open data block's bytes
	blockFirst []byte // key of the open block's first cell
	blockBuf   []byte // header+data+checksums scratch
	index      []indexEntry
	prevByType map[string]int64

	firstData, lastData int64
	lastKey             []byte
	entries             int64
	keyBytes, valBytes  int64
	totalUncompressed   int64
	minTS, maxTS        int64
	family              []byte
}

// NewWriter returns a writer onto w, which it buffers; Close flushes it but
// does not close w.
func NewWriter(w io.Writer, cfg Config) (*Writer, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Writer{
		cfg: cfg, out: bufio.NewWriterSize(w, 1<<20),
		prevByType: map[string]int64{}, firstData: -1, lastData: -1,
		minTS: -1,
	}, nil
}

// appendKey appends the KeyValue key of c.
func appendKey(dst []byte, c *Cell) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(c.Row)))
	dst = append(dst, c.Row...)
	dst = append(dst, byte(len(c.Family)))
	dst = append(dst, c.Family...)
	dst = append(dst, c.Qualifier...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Timestamp))
	return append(dst, typePut)
}

// keyLen is the length of c's KeyValue key.
func keyLen(c *Cell) int { return 2 + len(c.Row) + 1 + len(c.Family) + len(c.Qualifier) + 9 }

// compareKeys orders two KeyValue keys as HBase's CellComparatorImpl does
// for Put cells: row, family, qualifier bytewise, then timestamp
// descending. Both keys must be well formed.
func compareKeys(a, b []byte) int {
	ra, rb := int(binary.BigEndian.Uint16(a)), int(binary.BigEndian.Uint16(b))
	if c := bytes.Compare(a[2:2+ra], b[2:2+rb]); c != 0 {
		return c
	}
	// family and qualifier: family length byte, then family+qualifier run
	// up to the 9-byte timestamp/type tail. Comparing the family first,
	// then the qualifier, is what HBase does.
	fa, fb := int(a[2+ra]), int(b[2+rb])
	famA, famB := a[3+ra:3+ra+fa], b[3+rb:3+rb+fb]
	if c := bytes.Compare(famA, famB); c != 0 {
		return c
	}
	qa, qb := a[3+ra+fa:len(a)-9], b[3+rb+fb:len(b)-9]
	if c := bytes.Compare(qa, qb); c != 0 {
		return c
	}
	ta, tb := int64(binary.BigEndian.Uint64(a[len(a)-9:])), int64(binary.BigEndian.Uint64(b[len(b)-9:]))
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return int(b[len(b)-1]) - int(a[len(a)-1])
}

// Append adds one cell. Its key must be greater than the previous cell's,
// and all cells must have one family.
func (w *Writer) Append(c Cell) error {
	if w.err != nil {
		return w.err
	}
	switch {
	case len(c.Row) == 0 || len(c.Row) > 32767:
		return fmt.Errorf("%w: row length %d not in [1, 32767]", ErrInvalid, len(c.Row))
	case len(c.Family) == 0 || len(c.Family) > 127:
		return fmt.Errorf("%w: family length %d not in [1, 127]", ErrInvalid, len(c.Family))
	case c.Timestamp < 0:
		return fmt.Errorf("%w: negative timestamp %d", ErrInvalid, c.Timestamp)
	case len(c.Value) > 1<<30 || keyLen(&c) > 1<<20:
		return fmt.Errorf("%w: cell too large", ErrInvalid)
	}
	if w.family == nil {
		w.family = bytes.Clone(c.Family)
	} else if !bytes.Equal(w.family, c.Family) {
		return fmt.Errorf("%w: family %q in a file of family %q", ErrInvalid, c.Family, w.family)
	}
	start := len(w.block)
	kl := keyLen(&c)
	w.block = binary.BigEndian.AppendUint32(w.block, uint32(kl))
	w.block = binary.BigEndian.AppendUint32(w.block, uint32(len(c.Value)))
	keyAt := len(w.block)
	w.block = appendKey(w.block, &c)
	key := w.block[keyAt:]
	if w.lastKey != nil && compareKeys(w.lastKey, key) >= 0 {
		w.block = w.block[:start]
		return fmt.Errorf("%w: row %q qualifier %q ts %d after row %q", ErrOrder, c.Row, c.Qualifier, c.Timestamp, lastRow(w.lastKey))
	}
	w.block = append(w.block, c.Value...)
	w.block = append(w.block, 0, 0) // tags length
	w.block = append(w.block, 0)    // memstore ts: vlong 0
	w.lastKey = append(w.lastKey[:0], key...)
	if w.blockFirst == nil {
		w.blockFirst = bytes.Clone(key)
	}
	w.entries++
	w.keyBytes += int64(kl)
	w.valBytes += int64(len(c.Value))
	if w.minTS < 0 || c.Timestamp < w.minTS {
		w.minTS = c.Timestamp
	}
	if c.Timestamp > w.maxTS {
		w.maxTS = c.Timestamp
	}
	// HBase closes a block once it holds BlockSize bytes; cells of one key
	// never straddle blocks here because keys never repeat.
	if len(w.block) >= w.cfg.BlockSize {
		if err := w.finishData(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func lastRow(key []byte) []byte { return key[2 : 2+int(binary.BigEndian.Uint16(key))] }

// Entries is the number of cells appended.
func (w *Writer) Entries() int64 { return w.entries }

// Size is the number of bytes the file has so far (blocks written; the
// open block, index, file info and trailer are not counted).
func (w *Writer) Size() int64 { return w.pos + int64(len(w.block)) }

// finishData writes the open data block.
func (w *Writer) finishData() error {
	if len(w.block) == 0 {
		return nil
	}
	off := w.pos
	if w.firstData < 0 {
		w.firstData = off
	}
	w.lastData = off
	size, err := w.writeBlock(magicData, w.block)
	if err != nil {
		return err
	}
	w.index = append(w.index, indexEntry{offset: off, size: int32(size), key: w.blockFirst})
	w.block, w.blockFirst = w.block[:0], nil
	return nil
}

// writeBlock writes one block (header, data, checksums) and returns its
// on-disk size with header.
func (w *Writer) writeBlock(magic, data []byte) (int, error) {
	chunk := w.cfg.BytesPerChecksum
	withHeader := headerSize + len(data)
	nChunks := (withHeader + chunk - 1) / chunk
	onDisk := withHeader + 4*nChunks
	b := w.blockBuf[:0]
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint32(b, uint32(onDisk-headerSize))
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	prev, ok := w.prevByType[string(magic)]
	if !ok {
		prev = -1
	}
	b = binary.BigEndian.AppendUint64(b, uint64(prev))
	b = append(b, checksumCRC32C)
	b = binary.BigEndian.AppendUint32(b, uint32(chunk))
	b = binary.BigEndian.AppendUint32(b, uint32(withHeader))
	b = append(b, data...)
	for i := 0; i < withHeader; i += chunk {
		b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b[i:min(i+chunk, withHeader)], castagnoli))
	}
	w.blockBuf = b
	if _, err := w.out.Write(b); err != nil {
		return 0, fmt.Errorf("hfile: write: %w", err)
	}
	w.prevByType[string(magic)] = w.pos
	w.pos += int64(len(b))
	w.totalUncompressed += int64(withHeader)
	return len(b), nil
}

// Close writes the rest of the file (last data block, index, file info,
// trailer) and flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.err = ErrClosed
	if w.entries == 0 {
		return ErrEmpty
	}
	if err := w.finishData(); err != nil {
		return err
	}
	// Root data index.
	var root []byte
	for _, e := range w.index {
		root = binary.BigEndian.AppendUint64(root, uint64(e.offset))
		root = binary.BigEndian.AppendUint32(root, uint32(e.size))
		root = appendVLong(root, int64(len(e.key)))
		root = append(root, e.key...)
	}
	rootOff := w.pos
	if _, err := w.writeBlock(magicRoot, root); err != nil {
		return err
	}
	// Meta index: empty (no meta blocks).
	if _, err := w.writeBlock(magicRoot, nil); err != nil {
		return err
	}
	infoOff := w.pos
	if _, err := w.writeBlock(magicFileInfo, w.fileInfo()); err != nil {
		return err
	}
	t := w.trailer(infoOff, rootOff, int64(len(root)))
	if _, err := w.out.Write(t); err != nil {
		return fmt.Errorf("hfile: write: %w", err)
	}
	w.pos += int64(len(t))
	if err := w.out.Flush(); err != nil {
		return fmt.Errorf("hfile: write: %w", err)
	}
	return nil
}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// boolBytes is Java's Bytes.toBytes(boolean).
func boolBytes(b bool) []byte {
	if b {
		return []byte{0xff}
	}
	return []byte{0}
}

// fileInfo encodes the file info block's bytes.
func (w *Writer) fileInfo() []byte {
	now := w.cfg.Now.UnixMilli()
	tr := protowire.AppendTag(nil, 1, protowire.VarintType)
	tr = protowire.AppendVarint(tr, uint64(w.minTS))
	tr = protowire.AppendTag(tr, 2, protowire.VarintType)
	tr = protowire.AppendVarint(tr, uint64(w.maxTS))
	entries := []struct {
		k string
		v []byte
	}{
		{KeyLastKey, w.lastKey},
		{KeyAvgKeyLen, be32(int32(w.keyBytes / w.entries))},
		{KeyAvgValueLen, be32(int32(w.valBytes / w.entries))},
		{KeyCreateTime, be64(now)},
		{KeyMaxTagsLen, be32(0)},
		{KeyTagsCompressed, boolBytes(false)},
		{KeyMaxMemstoreTS, be64(0)},
		{KeyKVVersion, be32(1)},
		{KeyBulkLoadTime, be64(now)},
		{KeyBulkLoadTask, []byte(w.cfg.Task)},
		{KeyMajorCompacted, boolBytes(true)},
		{KeyExcludeMinor, boolBytes(false)},
		{KeyTimeRange, append(bytes.Clone(pbMagic), tr...)},
		{KeyEarliestPutTS, be64(w.minTS)},
	}
	var msg []byte
	for _, e := range entries {
		var pair []byte
		pair = protowire.AppendTag(pair, 1, protowire.BytesType)
		pair = protowire.AppendBytes(pair, []byte(e.k))
		pair = protowire.AppendTag(pair, 2, protowire.BytesType)
		pair = protowire.AppendBytes(pair, e.v)
		msg = protowire.AppendTag(msg, 1, protowire.BytesType)
		msg = protowire.AppendBytes(msg, pair)
	}
	out := bytes.Clone(pbMagic)
	out = protowire.AppendVarint(out, uint64(len(msg)))
	return append(out, msg...)
}

// trailer encodes the fixed 4096-byte trailer.
func (w *Writer) trailer(infoOff, rootOff, rootSize int64) []byte {
	var m []byte
	u := func(field protowire.Number, v uint64) {
		m = protowire.AppendTag(m, field, protowire.VarintType)
		m = protowire.AppendVarint(m, v)
	}
	u(1, uint64(infoOff))
	u(2, uint64(rootOff))
	u(3, uint64(rootSize))
	u(4, uint64(w.totalUncompressed+trailerSize))
	u(5, uint64(len(w.index)))
	u(6, 0)
	u(7, uint64(w.entries))
	u(8, 1)
	u(9, uint64(w.firstData))
	u(10, uint64(w.lastData))
	m = protowire.AppendTag(m, 11, protowire.BytesType)
	m = protowire.AppendString(m, comparatorClass)
	u(12, compressionNone)
	t := make([]byte, 0, trailerSize)
	t = append(t, magicTrailer...)
	t = protowire.AppendVarint(t, uint64(len(m)))
	t = append(t, m...)
	t = t[:trailerSize-4]
	return binary.BigEndian.AppendUint32(t, uint32(minorVersion)<<24|majorVersion)
}

// appendVLong is Hadoop's WritableUtils.writeVLong (also writeVInt).
func appendVLong(dst []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(dst, byte(v))
	}
	n := -112
	if v < 0 {
		v ^= -1
		n = -120
	}
	for t := v; t != 0; t >>= 8 {
		n--
	}
	dst = append(dst, byte(n))
	if n < -120 {
		n = -(n + 120)
	} else {
		n = -(n + 112)
	}
	for i := n; i > 0; i-- {
		dst = append(dst, byte(v>>((i-1)*8)))
	}
	return dst
}
