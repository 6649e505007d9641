package hbase

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// newCoalescingClient returns a client that coalesces Multi calls of gets
// beyond inFlight per connection, with its metrics on a private registry.
func newCoalescingClient(t *testing.T, inFlight int) *Client {
	t.Helper()
	return newTestClientWith(t, Config{MultiInFlight: inFlight, Registerer: prometheus.NewRegistry()})
}

// TestMultiCoalescedGets runs many concurrent Multi calls of gets through
// one connection with at most one RPC in flight, so they share
// MultiRequests, and checks every caller gets exactly its own rows (values
// of several sizes, MOB cells, several cells per row, missing rows, rows in
// all four regions): the split of region results and of the shared cell
// block by caller is what is tested. Callers with an unknown family get
// that error on that action only; callers whose ctx ends get ctx's error,
// and the others are unaffected.
func TestMultiCoalescedGets(t *testing.T) {
	t.Parallel()
	c := newCoalescingClient(t, 1)
	ctx := testCtx(t)
	table := createTestTable(t, c)

	// 200 rows over the four regions; row i has i%3+1 cells in f, and
	// every 10th a MOB cell in m (above its 1 KiB threshold).
	const nRows = 200
	rowKey := func(i int) []byte { return fmt.Appendf(nil, "%c-%03d", 'a'+byte(i%26), i) }
	want := make(map[string]map[string]string)
	var puts []Action
	for i := range nRows {
		p := &Put{Row: rowKey(i)}
		cells := map[string]string{}
		for j := range i%3 + 1 {
			q := fmt.Sprintf("q%d", j)
			v := fmt.Sprintf("v%d-%d-%s", i, j, make([]byte, i%50))
			p.Values = append(p.Values, Value{Family: []byte("f"), Qualifier: []byte(q), Value: []byte(v)})
			cells["f:"+q] = v
		}
		if i%10 == 0 {
			v := string(make([]byte, 2000+i))
			p.Values = append(p.Values, Value{Family: []byte("m"), Qualifier: []byte("big"), Value: []byte(v)})
			cells["m:big"] = v
		}
		want[string(p.Row)] = cells
		puts = append(puts, p)
	}
	mustMulti(t, ctx, c, table, puts)

	check := func(row []byte, r ActionResult) error {
		if r.Err != nil {
			return fmt.Errorf("get %s: %w", row, r.Err)
		}
		got := map[string]string{}
		for _, cell := range r.Result.Cells {
			if string(cell.Row) != string(row) {
				return fmt.Errorf("get %s: cell of row %s", row, cell.Row)
			}
			got[string(cell.Family)+":"+string(cell.Qualifier)] = string(cell.Value)
		}
		w := want[string(row)]
		if len(got) != len(w) {
			return fmt.Errorf("get %s: %d cells, want %d", row, len(got), len(w))
		}
		for k, v := range w {
			if got[k] != v {
				return fmt.Errorf("get %s: %s = %d bytes, want %d", row, k, len(got[k]), len(v))
			}
		}
		return nil
	}

	const callers, calls = 24, 60
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls)
	var canceled, failedOK sync.Map
	for g := range callers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 7))
			for n := range calls {
				var rows [][]byte
				var acts []Action
				for range 1 + rnd.IntN(6) {
					var row []byte
					if rnd.IntN(8) == 0 {
						row = fmt.Appendf(nil, "%c-missing-%d", 'a'+byte(rnd.IntN(26)), rnd.IntN(1000))
					} else {
						row = rowKey(rnd.IntN(nRows))
					}
					rows = append(rows, row)
					acts = append(acts, &Get{Row: row})
				}
				badAt := -1
				if g%6 == 1 && n%3 == 0 { // an action that fails alone
					badAt = len(acts)
					acts = append(acts, &Get{Row: rowKey(n), Columns: []Column{{Family: []byte("nope")}}})
				}
				cctx, cancel := ctx, context.CancelFunc(func() {})
				if g%6 == 2 && n%2 == 0 { // a caller that gives up at once or soon
					cctx, cancel = context.WithTimeout(ctx, time.Duration(rnd.IntN(300))*time.Microsecond)
				}
				res, err := c.Multi(cctx, table, acts)
				cancel()
				if cctx != ctx && err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						errs <- fmt.Errorf("caller %d call %d: gave up with %v, want its ctx's error", g, n, err)
					}
					canceled.Store(g*calls+n, true)
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("caller %d call %d: %w", g, n, err)
					continue
				}
				for i, row := range rows {
					if err := check(row, res[i]); err != nil {
						errs <- fmt.Errorf("caller %d call %d: %w", g, n, err)
					}
				}
				if badAt >= 0 {
					if !errors.Is(res[badAt].Err, ErrNoSuchFamily) {
						errs <- fmt.Errorf("caller %d call %d: bad get: %v, want ErrNoSuchFamily", g, n, res[badAt].Err)
					}
					failedOK.Store(g*calls+n, true)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := func(m *sync.Map) (n int) {
		m.Range(func(any, any) bool { n++; return true })
		return n
	}
	shared := testutil.ToFloat64(c.m.coalesced)
	t.Logf("calls sharing a MultiRequest: %.0f of %d; gave up: %d; with a failed action: %d", shared, callers*calls, count(&canceled), count(&failedOK))
	if shared == 0 {
		t.Error("no Multi call shared a MultiRequest: 24 concurrent callers with one RPC in flight must queue")
	}
	if count(&failedOK) == 0 {
		t.Error("no call with a bad action ran")
	}
}

// TestMultiCoalesceIdle checks a lone caller is never held back: with
// nothing in flight, every call leaves at once, alone.
func TestMultiCoalesceIdle(t *testing.T) {
	t.Parallel()
	c := newCoalescingClient(t, 1)
	ctx := testCtx(t)
	table := createTestTable(t, c)
	for i := range 20 {
		res, err := c.Multi(ctx, table, []Action{&Get{Row: fmt.Appendf(nil, "row%d", i)}, &Get{Row: []byte("z")}})
		if err != nil || res[0].Err != nil || res[1].Err != nil {
			t.Fatalf("Multi %d: %v %+v", i, err, res)
		}
	}
	if n := testutil.ToFloat64(c.m.coalesced); n != 0 {
		t.Errorf("%.0f sequential calls shared a MultiRequest", n)
	}
}
