package sparkjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/pebblestore"
)

// CompareStores compares the embedded stores in dirs a and b cell for cell,
// every table, and returns up to max differences (none: equal). The meta
// table's creation time and the load markers' qualifiers (load ids) are
// not compared; the markers' values are.
func CompareStores(ctx context.Context, a, b string, max int) ([]string, error) {
	var cells [2]map[string]string
	for i, dir := range []string{a, b} {
		st, err := pebblestore.Open(dir, pebblestore.Options{CacheBytes: 8 << 20, RowCacheBytes: -1})
		if err != nil {
			return nil, err
		}
		cells[i], err = dump(ctx, st)
		if err = errors.Join(err, st.Close()); err != nil {
			return nil, err
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

// dump lists every cell of st as "table/row/qualifier" -> value (hex).
func dump(ctx context.Context, st storage.Store) (map[string]string, error) {
	out := map[string]string{}
	markers := 0
	for _, t := range storage.Tables {
		err := st.Scan(ctx, t, nil, nil, func(r storage.Row) error {
			for _, c := range r.Cells {
				q := c.Qualifier
				switch {
				case t == storage.TableMeta && string(r.Key) == "simdex" && string(q) == "created":
					continue
				case t == storage.TableMeta && bytes.Equal(r.Key, markerRow):
					q = fmt.Appendf(nil, "marker-%d", markers)
					markers++
				}
				out[fmt.Sprintf("%s/%x/%x", t, r.Key, q)] = fmt.Sprintf("%x", c.Value)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
