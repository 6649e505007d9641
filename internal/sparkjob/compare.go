package sparkjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/pebblestore"
)

// CompareStores compares two stores cell for cell, every table, and
// returns up to max differences (none: equal). A store is an embedded
// store's directory, or "hbase:NAMESPACE": the simdex tables in that
// namespace of the HBase hc connects to (hc's namespace is replaced). The
// meta table's creation time and the load markers' qualifiers (load ids)
// are not compared; the markers' values are. On HBase the timestamps of
// the index rows' base-set cells and of the band cells (their time
// bucket's start) are compared too; the other cells' (tombstones, fp and
// docs cells) are the time they were written.
//
// Both stores are read table by table at once and merged in key order
// (row, then qualifier: the order both stores scan in), so memory stays a
// few batches of cells whatever the stores hold.
func CompareStores(ctx context.Context, hc hbasestore.Config, a, b string, max int) ([]string, error) {
	var srcs [2]*cellSource
	for i, name := range []string{a, b} {
		src, err := openCellSource(ctx, hc, name)
		if err != nil {
			for _, s := range srcs[:i] {
				s.close()
			}
			return nil, fmt.Errorf("sparkjob: reading %s: %w", name, err)
		}
		srcs[i] = src
	}
	defer srcs[0].close()
	defer srcs[1].close()
	var diffs []string
	add := func(s string) bool {
		diffs = append(diffs, s)
		return len(diffs) < max
	}
	markers := [2]map[string]int{{}, {}}
	for _, t := range storage.Tables {
		more, err := compareTable(ctx, t, srcs, [2]string{a, b}, markers, add)
		if err != nil {
			return nil, err
		}
		if !more {
			return diffs, nil
		}
	}
	for _, v := range slices.Sorted(maps.Keys(markers[0])) {
		if n, m := markers[0][v], markers[1][v]; n != m && !add(fmt.Sprintf("meta: %d load markers of value %s in %s, %d in %s", n, v, a, m, b)) {
			return diffs, nil
		}
	}
	for _, v := range slices.Sorted(maps.Keys(markers[1])) {
		if _, ok := markers[0][v]; !ok && !add(fmt.Sprintf("meta: 0 load markers of value %s in %s, %d in %s", v, a, markers[1][v], b)) {
			return diffs, nil
		}
	}
	return diffs, nil
}

// storedCell is one cell as compared: its value in hex, with its timestamp where
// that is compared (cellSource.scan).
type storedCell struct {
	row, q []byte
	val    string
}

func (c storedCell) String() string { return fmt.Sprintf("%x/%x = %s", c.row, c.q, c.val) }

// cmp orders cells by row, then qualifier.
func (c storedCell) cmp(o storedCell) int {
	if n := bytes.Compare(c.row, o.row); n != 0 {
		return n
	}
	return bytes.Compare(c.q, o.q)
}

// compareTable merges table t of both sources and reports each
// difference to add (false from add: stop, and compareTable returns
// false). Load markers are counted by value into markers instead.
func compareTable(ctx context.Context, t storage.Table, srcs [2]*cellSource, names [2]string, markers [2]map[string]int, add func(string) bool) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	var next [2]func() (storedCell, bool, error)
	var stop [2]func()
	for i, src := range srcs {
		next[i], stop[i] = src.stream(ctx, t, markers[i])
	}
	defer func() {
		cancel()
		stop[0]()
		stop[1]()
	}()
	var cur [2]storedCell
	var ok [2]bool
	advance := func(i int) error {
		var err error
		cur[i], ok[i], err = next[i]()
		return err
	}
	for i := range 2 {
		if err := advance(i); err != nil {
			return false, err
		}
	}
	for ok[0] || ok[1] {
		var n int
		switch {
		case !ok[1]:
			n = -1
		case !ok[0]:
			n = 1
		default:
			n = cur[0].cmp(cur[1])
		}
		var more bool
		switch {
		case n < 0:
			more = add(fmt.Sprintf("only in %s: %s/%s", names[0], t, cur[0]))
		case n > 0:
			more = add(fmt.Sprintf("only in %s: %s/%s", names[1], t, cur[1]))
		case cur[0].val != cur[1].val:
			more = add(fmt.Sprintf("%s/%x/%x: %s in %s, %s in %s", t, cur[0].row, cur[0].q, cur[0].val, names[0], cur[1].val, names[1]))
		default:
			more = true
		}
		if !more {
			return false, nil
		}
		for i := range 2 {
			if (i == 0 && n <= 0) || (i == 1 && n >= 0) {
				if err := advance(i); err != nil {
					return false, err
				}
			}
		}
	}
	return true, nil
}

// cellSource scans the tables of one store: an embedded store's
// directory, or an HBase namespace.
type cellSource struct {
	pebble *pebblestore.Store
	hbase  *hbasestore.Store
}

func openCellSource(ctx context.Context, hc hbasestore.Config, name string) (*cellSource, error) {
	if ns, ok := strings.CutPrefix(name, "hbase:"); ok {
		cfg := hc
		cfg.Namespace = ns
		st, err := hbasestore.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return &cellSource{hbase: st}, nil
	}
	st, err := pebblestore.Open(name, pebblestore.Options{CacheBytes: 8 << 20, RowCacheBytes: -1})
	if err != nil {
		return nil, err
	}
	return &cellSource{pebble: st}, nil
}

func (s *cellSource) close() {
	if s.pebble != nil {
		s.pebble.Close()
	}
	if s.hbase != nil {
		s.hbase.Close()
	}
}

// batchCells is how many cells a scan hands to the merge at a time.
const batchCells = 4096

// stream scans table t in a goroutine and returns the function that
// yields its cells in order (false at the end) and the one that waits for
// the goroutine (after ctx ended, or after the last cell). The meta row's
// creation time is left out and load markers are counted by value into
// markers (complete once the last cell was yielded). The scan ends when
// ctx does.
func (s *cellSource) stream(ctx context.Context, t storage.Table, markers map[string]int) (next func() (storedCell, bool, error), wait func()) {
	batches := make(chan []storedCell, 2)
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(batches)
		var batch []storedCell
		emit := func(row, q []byte, val string) error {
			switch {
			case t == storage.TableMeta && string(row) == "simdex" && string(q) == "created":
				return nil
			case t == storage.TableMeta && bytes.Equal(row, markerRow):
				markers[val]++
				return nil
			}
			batch = append(batch, storedCell{row: bytes.Clone(row), q: bytes.Clone(q), val: val})
			if len(batch) < batchCells {
				return nil
			}
			select {
			case batches <- batch:
				batch = nil
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := s.scan(ctx, t, emit)
		if err == nil && len(batch) > 0 {
			select {
			case batches <- batch:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		errc <- err
	}()
	var cur []storedCell
	next = func() (storedCell, bool, error) {
		for len(cur) == 0 {
			b, ok := <-batches
			if !ok {
				return storedCell{}, false, <-errc
			}
			cur = b
		}
		c := cur[0]
		cur = cur[1:]
		return c, true, nil
	}
	wait = func() {
		for range batches {
		}
		<-done
	}
	return next, wait
}

// scan calls emit for every cell of table t in key order, the value in
// hex; on HBase the index rows' base-set cells and the band cells carry
// their timestamp ("@ts").
func (s *cellSource) scan(ctx context.Context, t storage.Table, emit func(row, q []byte, val string) error) error {
	if s.pebble != nil {
		return s.pebble.Scan(ctx, t, nil, nil, func(r storage.Row) error {
			for _, c := range r.Cells {
				if err := emit(r.Key, c.Qualifier, fmt.Sprintf("%x", c.Value)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	sc := s.hbase.Client().Scan(hbasestore.TableName(s.hbase.Config().WithDefaults().Namespace, t), &hbase.Scan{Caching: 1000})
	defer sc.Close(context.WithoutCancel(ctx))
	for {
		r, err := sc.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, c := range r.Cells {
			v := fmt.Sprintf("%x", c.Value)
			if (t == storage.TableIndex && len(c.Qualifier) > 0 && c.Qualifier[0] == 'b') || t == storage.TableBands {
				v += fmt.Sprintf("@%d", c.Timestamp)
			}
			if err := emit(c.Row, c.Qualifier, v); err != nil {
				return err
			}
		}
	}
}

// cellCounts counts the cells CompareStores compares in each table of the
// store name (as CompareStores names stores).
func cellCounts(ctx context.Context, hc hbasestore.Config, name string) (map[storage.Table]int, error) {
	src, err := openCellSource(ctx, hc, name)
	if err != nil {
		return nil, err
	}
	defer src.close()
	out := map[storage.Table]int{}
	for _, t := range storage.Tables {
		err := src.scan(ctx, t, func(row, q []byte, _ string) error {
			if t != storage.TableMeta || !bytes.Equal(row, markerRow) && string(q) != "created" {
				out[t]++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
