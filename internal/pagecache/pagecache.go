// Package pagecache tells the kernel which file pages simdex's bulk paths
// are done with. A bulk load writes its sorted runs and its sstables once
// and reads each run once, many times more bytes than memory; keeping
// those pages cached only evicts the machine's other files and, where
// fresh memory is expensive (a VM whose host takes back free guest pages
// within seconds, as on the machine of BENCHMARKS.md), makes every page
// written cost a host fault. Dropping them lets the next write reuse the
// same memory.
//
// Every call is advice: an error changes nothing a caller relies on, so
// none is returned, and on systems other than Linux the calls do nothing.
package pagecache
