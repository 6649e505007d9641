package sparkjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
func CompareStores(ctx context.Context, hc hbasestore.Config, a, b string, max int) ([]string, error) {
	var cells [2]map[string]string
	for i, name := range []string{a, b} {
		var err error
		if ns, ok := strings.CutPrefix(name, "hbase:"); ok {
			cfg := hc
			cfg.Namespace = ns
			cells[i], err = dumpHBase(ctx, cfg)
		} else {
			cells[i], err = dumpPebble(ctx, name)
		}
		if err != nil {
			return nil, fmt.Errorf("sparkjob: reading %s: %w", name, err)
		}
	}
	var diffs []string
	add := func(s string) bool {
		diffs = append(diffs, s)
		return len(diffs) < max
	}
	for k, v := range cells[0] {
		w, ok := cells[1][k]
		switch {
		case !ok:
			if !add(fmt.Sprintf("only in %s: %s = %s", a, k, v)) {
				return diffs, nil
			}
		case v != w:
			if !add(fmt.Sprintf("%s: %s in %s, %s in %s", k, v, a, w, b)) {
				return diffs, nil
			}
		}
	}
	for k, w := range cells[1] {
		if _, ok := cells[0][k]; !ok {
			if !add(fmt.Sprintf("only in %s: %s = %s", b, k, w)) {
				return diffs, nil
			}
		}
	}
	return diffs, nil
}

func dumpPebble(ctx context.Context, dir string) (map[string]string, error) {
	st, err := pebblestore.Open(dir, pebblestore.Options{CacheBytes: 8 << 20, RowCacheBytes: -1})
	if err != nil {
		return nil, err
	}
	cells, err := dump(ctx, st)
	return cells, errors.Join(err, st.Close())
}

// cellDump gathers cells as "table/row/qualifier" -> value (hex), leaving
// out the meta row's creation time; load markers, whose qualifiers are
// load ids, are counted by value.
type cellDump struct {
	out     map[string]string
	markers map[string]int
}

func (d *cellDump) add(t storage.Table, row, q []byte, val string) {
	switch {
	case t == storage.TableMeta && string(row) == "simdex" && string(q) == "created":
		return
	case t == storage.TableMeta && bytes.Equal(row, markerRow):
		k := fmt.Sprintf("%s/%x/marker=%s", t, row, val)
		d.markers[k]++
		d.out[k] = fmt.Sprintf("%d markers", d.markers[k])
		return
	}
	d.out[fmt.Sprintf("%s/%x/%x", t, row, q)] = val
}

// dump lists every cell of st.
func dump(ctx context.Context, st storage.Store) (map[string]string, error) {
	d := &cellDump{out: map[string]string{}, markers: map[string]int{}}
	for _, t := range storage.Tables {
		err := st.Scan(ctx, t, nil, nil, func(r storage.Row) error {
			for _, c := range r.Cells {
				d.add(t, r.Key, c.Qualifier, fmt.Sprintf("%x", c.Value))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return d.out, nil
}

// dumpHBase lists every cell of the simdex tables of cfg's namespace,
// with the timestamps of the base-set cells ('b' qualifiers) and band
// cells.
func dumpHBase(ctx context.Context, cfg hbasestore.Config) (map[string]string, error) {
	st, err := hbasestore.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	d := &cellDump{out: map[string]string{}, markers: map[string]int{}}
	for _, t := range storage.Tables {
		sc := st.Client().Scan(hbasestore.TableName(st.Config().WithDefaults().Namespace, t), &hbase.Scan{Caching: 1000})
		for {
			r, err := sc.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				sc.Close(context.WithoutCancel(ctx))
				return nil, err
			}
			for _, c := range r.Cells {
				v := fmt.Sprintf("%x", c.Value)
				if (t == storage.TableIndex && len(c.Qualifier) > 0 && c.Qualifier[0] == 'b') || t == storage.TableBands {
					v += fmt.Sprintf("@%d", c.Timestamp)
				}
				d.add(t, c.Row, c.Qualifier, v)
			}
		}
	}
	return d.out, nil
}
