package hfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"google.golang.org/protobuf/encoding/protowire"
)

// File is what Read found in an HFile written by this package (or any
// HFile v3 with the same choices: no compression, no data block encoding,
// CRC32C checksums, single-level index, tags and memstore timestamps
// declared as this writer declares them).
type File struct {
	// Info is the file info map.
	Info map[string][]byte
	// Cells in file order.
	Cells []Cell
	// Blocks is the number of data blocks.
	Blocks int
}

// trailerFields is the decoded FileTrailerProto.
type trailerFields struct {
	infoOff, rootOff, rootSize, totalUncompressed uint64
	dataIndexCount, metaIndexCount, levels        uint64
	entries, firstData, lastData                  uint64
	comparator                                    string
	compression                                   uint64
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// Read parses a whole HFile held in data, checking every checksum, the key
// order and that the index and trailer agree with the blocks. It is the
// test oracle of the writer, not a general HFile reader.
func Read(data []byte) (*File, error) {
	if len(data) < trailerSize {
		return nil, corrupt("%d bytes, shorter than the trailer", len(data))
	}
	tr := data[len(data)-trailerSize:]
	if v := binary.BigEndian.Uint32(tr[trailerSize-4:]); v != uint32(minorVersion)<<24|majorVersion {
		return nil, corrupt("version %#x, want major 3 minor 3", v)
	}
	if !bytes.Equal(tr[:8], magicTrailer) {
		return nil, corrupt("trailer magic %q", tr[:8])
	}
	t, err := parseTrailer(tr[8 : trailerSize-4])
	if err != nil {
		return nil, err
	}
	if t.compression != compressionNone || t.levels != 1 || t.metaIndexCount != 0 {
		return nil, corrupt("compression %d, index levels %d, meta blocks %d: not written by this package", t.compression, t.levels, t.metaIndexCount)
	}
	body := data[:len(data)-trailerSize]
	f := &File{Info: map[string][]byte{}}
	// Data blocks, back to back from firstData through lastData.
	type blockAt struct {
		off   uint64
		size  int
		first []byte
	}
	var blocks []blockAt
	var last []byte
	off := t.firstData
	for off <= t.lastData {
		magic, payload, size, err := readBlock(body, off)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(magic, magicData) {
			return nil, corrupt("block at %d: magic %q, want data", off, magic)
		}
		var first []byte
		for p := payload; len(p) > 0; {
			c, key, rest, err := parseKV(p)
			if err != nil {
				return nil, fmt.Errorf("block at %d: %w", off, err)
			}
			if last != nil && compareKeys(last, key) >= 0 {
				return nil, corrupt("block at %d: key out of order", off)
			}
			if first == nil {
				first = key
			}
			last = key
			f.Cells = append(f.Cells, c)
			p = rest
		}
		if first == nil {
			return nil, corrupt("block at %d: empty data block", off)
		}
		blocks = append(blocks, blockAt{off, size, first})
		off += uint64(size)
	}
	f.Blocks = len(blocks)
	if uint64(len(f.Cells)) != t.entries {
		return nil, corrupt("%d cells, trailer says %d", len(f.Cells), t.entries)
	}
	// Root index: one entry per data block.
	if off != t.rootOff {
		return nil, corrupt("data blocks end at %d, root index at %d", off, t.rootOff)
	}
	magic, root, rootSize, err := readBlock(body, t.rootOff)
	if err != nil {
		return nil, err
	}
	// The (empty) meta index follows the root index; the file info
	// follows it.
	metaOff := t.rootOff + uint64(rootSize)
	magic2, meta, metaSize, err := readBlock(body, metaOff)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(magic2, magicRoot) || len(meta) != 0 || metaOff+uint64(metaSize) != t.infoOff {
		return nil, corrupt("meta index at %d: magic %q, %d bytes", metaOff, magic2, len(meta))
	}
	if !bytes.Equal(magic, magicRoot) || uint64(len(root)) != t.rootSize {
		return nil, corrupt("root index: magic %q, %d bytes (trailer: %d)", magic, len(root), t.rootSize)
	}
	for i := 0; len(root) > 0; i++ {
		if len(root) < 12 || i >= len(blocks) {
			return nil, corrupt("root index entry %d: truncated or extra", i)
		}
		eoff, esize := binary.BigEndian.Uint64(root), binary.BigEndian.Uint32(root[8:])
		n, k, err := readVLong(root[12:])
		if err != nil || n < 0 || int64(len(root)-12-k) < n {
			return nil, corrupt("root index entry %d: bad key length", i)
		}
		key := root[12+k : 12+k+int(n)]
		root = root[12+k+int(n):]
		b := blocks[i]
		if eoff != b.off || int(esize) != b.size || !bytes.Equal(key, b.first) {
			return nil, corrupt("root index entry %d does not match data block at %d", i, b.off)
		}
		if i == len(blocks)-1 && len(root) != 0 {
			return nil, corrupt("root index: bytes after the last entry")
		}
	}
	if t.dataIndexCount != uint64(len(blocks)) {
		return nil, corrupt("trailer: %d index entries, %d blocks", t.dataIndexCount, len(blocks))
	}
	// File info.
	magic, info, infoSize, err := readBlock(body, t.infoOff)
	if err != nil {
		return nil, err
	}
	if t.infoOff+uint64(infoSize) != uint64(len(body)) {
		return nil, corrupt("bytes between the file info and the trailer")
	}
	if !bytes.Equal(magic, magicFileInfo) || !bytes.HasPrefix(info, pbMagic) {
		return nil, corrupt("file info: magic %q", magic)
	}
	msg, n := protowire.ConsumeBytes(info[len(pbMagic):])
	if n < 0 {
		return nil, corrupt("file info: bad length")
	}
	if err := parseFileInfo(msg, f.Info); err != nil {
		return nil, err
	}
	if !bytes.Equal(f.Info[KeyLastKey], last) {
		return nil, corrupt("file info: LASTKEY is not the last cell's key")
	}
	return f, nil
}

// readBlock reads and checks the block at off.
func readBlock(body []byte, off uint64) (magic, payload []byte, size int, err error) {
	if off > uint64(len(body)) || uint64(len(body))-off < headerSize {
		return nil, nil, 0, corrupt("block at %d: past the end", off)
	}
	h := body[off:]
	onDisk := int64(binary.BigEndian.Uint32(h[8:])) + headerSize
	dataLen := int64(binary.BigEndian.Uint32(h[12:]))
	chunk := int64(binary.BigEndian.Uint32(h[25:]))
	withHeader := int64(binary.BigEndian.Uint32(h[29:]))
	switch {
	case h[24] != checksumCRC32C:
		return nil, nil, 0, corrupt("block at %d: checksum type %d", off, h[24])
	case chunk < 512 || withHeader != headerSize+dataLen:
		return nil, nil, 0, corrupt("block at %d: chunk %d, sizes %d/%d", off, chunk, withHeader, dataLen)
	case onDisk != withHeader+4*((withHeader+chunk-1)/chunk) || onDisk > int64(len(h)):
		return nil, nil, 0, corrupt("block at %d: on-disk size %d", off, onDisk)
	}
	sums := h[withHeader:onDisk]
	for i := int64(0); i < withHeader; i += chunk {
		want := binary.BigEndian.Uint32(sums[i/chunk*4:])
		if got := crc32.Checksum(h[i:min(i+chunk, withHeader)], castagnoli); got != want {
			return nil, nil, 0, corrupt("block at %d: checksum mismatch in chunk %d", off, i/chunk)
		}
	}
	return h[:8], h[headerSize:withHeader], int(onDisk), nil
}

// parseKV decodes one KeyValue (with tags length and memstore ts).
func parseKV(p []byte) (c Cell, key, rest []byte, err error) {
	if len(p) < 8 {
		return c, nil, nil, corrupt("truncated cell")
	}
	kl, vl := int64(binary.BigEndian.Uint32(p)), int64(binary.BigEndian.Uint32(p[4:]))
	if kl < 12 || 8+kl+vl+3 > int64(len(p)) {
		return c, nil, nil, corrupt("cell lengths %d/%d", kl, vl)
	}
	key = p[8 : 8+kl]
	rl := int64(binary.BigEndian.Uint16(key))
	if 2+rl+1 > kl-9 {
		return c, nil, nil, corrupt("row length %d", rl)
	}
	fl := int64(key[2+rl])
	if 3+rl+fl > kl-9 || key[kl-1] != typePut {
		return c, nil, nil, corrupt("family length %d or type %d", fl, key[kl-1])
	}
	c.Row = key[2 : 2+rl]
	c.Family = key[3+rl : 3+rl+fl]
	c.Qualifier = key[3+rl+fl : kl-9]
	c.Timestamp = int64(binary.BigEndian.Uint64(key[kl-9:]))
	c.Value = p[8+kl : 8+kl+vl]
	tail := p[8+kl+vl:]
	if tail[0] != 0 || tail[1] != 0 || tail[2] != 0 {
		return c, nil, nil, corrupt("tags or memstore ts not zero")
	}
	return c, key, tail[3:], nil
}

func parseTrailer(b []byte) (trailerFields, error) {
	var t trailerFields
	msg, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return t, corrupt("trailer: bad length")
	}
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return t, corrupt("trailer: bad tag")
		}
		msg = msg[n:]
		if typ == protowire.BytesType && num == 11 {
			s, n := protowire.ConsumeString(msg)
			if n < 0 {
				return t, corrupt("trailer: bad comparator")
			}
			t.comparator, msg = s, msg[n:]
			continue
		}
		if typ != protowire.VarintType {
			n = protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return t, corrupt("trailer: bad field %d", num)
			}
			msg = msg[n:]
			continue
		}
		v, n := protowire.ConsumeVarint(msg)
		if n < 0 {
			return t, corrupt("trailer: bad varint")
		}
		msg = msg[n:]
		switch num {
		case 1:
			t.infoOff = v
		case 2:
			t.rootOff = v
		case 3:
			t.rootSize = v
		case 4:
			t.totalUncompressed = v
		case 5:
			t.dataIndexCount = v
		case 6:
			t.metaIndexCount = v
		case 7:
			t.entries = v
		case 8:
			t.levels = v
		case 9:
			t.firstData = v
		case 10:
			t.lastData = v
		case 12:
			t.compression = v
		}
	}
	return t, nil
}

func parseFileInfo(msg []byte, into map[string][]byte) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return corrupt("file info: bad entry tag")
		}
		pair, n2 := protowire.ConsumeBytes(msg[n:])
		if n2 < 0 {
			return corrupt("file info: bad entry")
		}
		msg = msg[n+n2:]
		var k, v []byte
		for len(pair) > 0 {
			num, typ, n := protowire.ConsumeTag(pair)
			if n < 0 || typ != protowire.BytesType {
				return corrupt("file info: bad pair")
			}
			b, n2 := protowire.ConsumeBytes(pair[n:])
			if n2 < 0 {
				return corrupt("file info: bad pair")
			}
			pair = pair[n+n2:]
			switch num {
			case 1:
				k = b
			case 2:
				v = b
			}
		}
		into[string(k)] = v
	}
	return nil
}

// readVLong is Hadoop's WritableUtils.readVLong; it returns the value and
// the bytes used.
func readVLong(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, corrupt("truncated vlong")
	}
	first := int8(b[0])
	if first >= -112 {
		return int64(first), 1, nil
	}
	var n int
	if first < -120 {
		n = int(-119 - int(first))
	} else {
		n = int(-111 - int(first))
	}
	if len(b) < n {
		return 0, 0, corrupt("truncated vlong")
	}
	var v int64
	for i := 1; i < n; i++ {
		v = v<<8 | int64(b[i])
	}
	if first < -120 || (first >= -112 && first < 0) {
		v ^= -1
	}
	return v, n, nil
}
