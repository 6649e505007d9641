package bulkload

import "math/bits"

// docShard is the shard that writes the fp, band and docs cells of the
// documents with fingerprint fp: fp's position in the 64-bit space, times
// n.
func (l *loader) docShard(fp uint64) int {
	hi, _ := bits.Mul64(fp, uint64(l.cfg.Shards))
	return int(hi)
}

// rowShard is the shard that writes index row (t, prefix): the row's
// position (t + prefix/2^P)/T in the row-key space, times n.
func (l *loader) rowShard(t int, v uint64) int {
	p := l.perms[t]
	a := v >> (64 - p.PrefixBits) << (64 - p.PrefixBits) // prefix, top-aligned
	hi, _ := bits.Mul64(a, uint64(l.cfg.Shards))
	return int((uint64(t)*uint64(l.cfg.Shards) + hi) / uint64(l.T))
}
