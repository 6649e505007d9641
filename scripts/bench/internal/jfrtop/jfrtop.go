// Package jfrtop sums a Java Flight Recorder CPU profile of the HBase region
// server by thread group, by what a Get spends its time on, and by top
// frame, so "where does a lookup's HBase CPU go" has numbers
// (benchmarks/2026-11-23-hbase-region-server.md).
//
//	jcmd <jvm pid> JFR.start duration=30s filename=/tmp/rs.jfr settings=profile
//	jfr print --events jdk.ExecutionSample --stack-depth 96 /tmp/rs.jfr | go run ./scripts/bench/jfrtop
//
// A sample's category is the first rule (in the order of the rules table)
// that matches any of its frames: the rules go from specific to general, so
// a key comparison inside a block seek counts as the seek, and a seek inside
// scanner set-up as the seek, not as set-up. Samples are execution samples (on-CPU Java
// code); time in the kernel (socket writes, futex) shows only as the Java
// frame that called it.
package jfrtop

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// rule names a category and the frame substrings that put a sample in it.
type rule struct {
	name  string
	match []string
}

// rules are tried in order; the first matching any frame of a sample wins.
var rules = []rule{
	{"bloom filter check", []string{"BloomFilter", "passesGeneralRowBloomFilter", "passesBloomFilter"}},
	{"seek within the block (blockSeek, key compare)", []string{"HFileScannerImpl.blockSeek", "HFileScannerImpl.loadBlockAndSeekToKey", "BufferedEncodedSeeker", "DataBlockEncoder"}},
	{"block index / block cache get", []string{"BlockIndexReader", "HFileBlockIndex", "BlockCache", "LruBlockCache", "LruAdaptiveBlockCache", "CombinedBlockCache", "HFileReaderImpl.getCachedBlock", "HFileReaderImpl.readBlock", "BlockCacheKey", "HFileBlock."}},
	{"HFile seek, other (HFileScannerImpl)", []string{"HFileReaderImpl$HFileScannerImpl", "StoreFileScanner.seek", "StoreFileScanner.reseek", "StoreFileScanner.requestSeek"}},
	{"memstore", []string{"MemStore", "Segment", "CellSet", "CellChunkMap"}},
	{"scan query matcher / column tracker", []string{"QueryMatcher", "ColumnTracker", "DeleteTracker", "NewVersionBehaviorTracker"}},
	{"store scanner set-up and close (StoreScanner, KeyValueHeap, StoreFileScanner)", []string{"StoreScanner", "KeyValueHeap", "StoreFileScanner", "HStore.getScanners", "HStore.getScanner", "StoreFileReader", "HStoreFile", "StoreFileManager"}},
	{"region scanner (HRegion get/scan)", []string{"RegionScannerImpl", "HRegion.get", "HRegion.getScanner", "HRegion$RegionScannerImpl"}},
	{"metrics and tracing", []string{"metrics", "Metrics", "opentelemetry", "TraceUtil", "Histogram", "FastLongHistogram", "LongAdder", "Counter"}},
	{"cell block encode (response cells)", []string{"CellBlockBuilder", "KeyValueCodec", "encodeCellBlock"}},
	{"protobuf decode/encode (request, Multi, Result)", []string{"ProtobufUtil", "RequestConverter", "ResponseConverter", "protobuf", "shaded.protobuf"}},
	{"RPC call dispatch and response (RpcServer, ServerCall)", []string{"ipc.ServerCall", "ipc.ServerRpcConnection", "ipc.NettyServerCall", "ipc.RpcServer", "ipc.CallRunner", "ipc.NettyRpcServer", "NettyRpcFrameDecoder", "ipc.SimpleRpc", "RpcExecutor", "FastPathBalancedQueueRpcExecutor"}},
	{"RSRpcServices.multi / get (other)", []string{"RSRpcServices"}},
	{"Netty", []string{"netty"}},
	{"locks, queues, park", []string{"java.util.concurrent", "LockSupport", "jdk.internal.misc.Unsafe.park"}},
	{"JDK collections and allocation", []string{"java.util.", "java.lang."}},
}

// Run runs the jfrtop tool with args (its flags and arguments, without the
// command name).
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("jfrtop", flag.ContinueOnError)
	top := fs.Int("top", 40, "top frames to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return run(os.Stdin, os.Stdout, *top)
}

// sample is one execution sample: its thread and frames, leaf first.
type sample struct {
	thread string
	frames []string
}

func threadGroup(t string) string {
	switch {
	case strings.HasPrefix(t, "RpcServer.default"), strings.HasPrefix(t, "RpcServer.priority"), strings.HasPrefix(t, "RpcServer.replication"):
		return "RPC handlers"
	case strings.Contains(t, "EventLoopGroup"), strings.Contains(t, "RS-EventLoop"), strings.Contains(t, "Netty"):
		return "Netty event loops"
	case strings.Contains(t, "GC"), strings.Contains(t, "G1"):
		return "GC"
	case strings.Contains(t, "Compiler"), strings.Contains(t, "C2"), strings.Contains(t, "C1"):
		return "JIT"
	}
	return "other: " + strings.TrimRightFunc(strings.SplitN(t, ",", 2)[0], func(r rune) bool { return r >= '0' && r <= '9' || r == '-' || r == '=' || r == '#' })
}

func parse(r io.Reader) ([]sample, error) {
	var out []sample
	var cur *sample
	inStack := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "jdk.ExecutionSample {"):
			out = append(out, sample{})
			cur = &out[len(out)-1]
		case cur == nil:
		case strings.HasPrefix(l, "sampledThread = "):
			t := strings.TrimPrefix(l, "sampledThread = ")
			t = strings.Trim(strings.SplitN(t, "\" (", 2)[0], "\"")
			cur.thread = t
		case strings.HasPrefix(l, "stackTrace = ["):
			inStack = true
		case inStack && l == "]":
			inStack = false
		case inStack && l != "...":
			if i := strings.Index(l, "("); i > 0 {
				l = l[:i]
			}
			cur.frames = append(cur.frames, l)
		}
	}
	return out, sc.Err()
}

func categorize(s sample) string {
	for _, r := range rules {
		for _, f := range s.frames {
			for _, m := range r.match {
				if strings.Contains(f, m) {
					return r.name
				}
			}
		}
	}
	return "other"
}

type kv struct {
	k string
	n int
}

func sorted(m map[string]int) []kv {
	var s []kv
	for k, n := range m {
		s = append(s, kv{k, n})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].n > s[j].n || s[i].n == s[j].n && s[i].k < s[j].k })
	return s
}

func run(r io.Reader, w io.Writer, top int) error {
	ss, err := parse(r)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return fmt.Errorf("no jdk.ExecutionSample events on stdin")
	}
	groups := map[string]int{}
	cats := map[string]int{}
	netty := map[string]int{}
	leaf := map[string]int{}
	handlers := 0
	for _, s := range ss {
		g := threadGroup(s.thread)
		groups[g]++
		if g == "Netty event loops" {
			netty[categorize(s)]++
		}
		if g != "RPC handlers" {
			continue
		}
		handlers++
		cats[categorize(s)]++
		if len(s.frames) > 0 {
			leaf[s.frames[0]]++
		}
	}
	pct := func(n, of int) string { return fmt.Sprintf("%5.1f%%", 100*float64(n)/float64(of)) }
	fmt.Fprintf(w, "%d samples\n\nby thread group:\n", len(ss))
	for _, e := range sorted(groups) {
		fmt.Fprintf(w, "  %s %6d  %s\n", pct(e.n, len(ss)), e.n, e.k)
	}
	if handlers > 0 {
		fmt.Fprintf(w, "\nRPC handler samples by category (first matching rule):\n")
		for _, e := range sorted(cats) {
			fmt.Fprintf(w, "  %s %6d  %s\n", pct(e.n, handlers), e.n, e.k)
		}
		fmt.Fprintf(w, "\nRPC handler top frames (self):\n")
		for i, e := range sorted(leaf) {
			if i == top {
				break
			}
			fmt.Fprintf(w, "  %s %6d  %s\n", pct(e.n, handlers), e.n, e.k)
		}
	}
	if n := groups["Netty event loops"]; n > 0 {
		fmt.Fprintf(w, "\nNetty event loop samples by category:\n")
		for _, e := range sorted(netty) {
			fmt.Fprintf(w, "  %s %6d  %s\n", pct(e.n, n), e.n, e.k)
		}
	}
	return nil
}
