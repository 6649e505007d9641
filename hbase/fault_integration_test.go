package hbase

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// traffic writes rows (and reads them back in 4-row multi-gets) from a few
// goroutines until stop, recording every acknowledged row and every error.
type traffic struct {
	c      *Client
	table  string
	opTime time.Duration

	mu    sync.Mutex // guards acked, errs
	acked [][]byte
	errs  []error
	ok    atomic.Int64 // successful operations

	stop chan struct{}
	wg   sync.WaitGroup
}

func startTraffic(c *Client, table string, writers int, opTime time.Duration) *traffic {
	tr := &traffic{c: c, table: table, opTime: opTime, stop: make(chan struct{})}
	for w := range writers {
		tr.wg.Go(func() { tr.run(w) })
	}
	return tr
}

func (tr *traffic) run(w int) {
	letters := "abcdefghijklmnopqrstuvwxyz"
	for i := 0; ; i++ {
		select {
		case <-tr.stop:
			return
		default:
		}
		row := fmt.Appendf(nil, "%c-w%d-%06d", letters[(i*7+w)%26], w, i)
		ctx, cancel := context.WithTimeout(context.Background(), tr.opTime)
		err := tr.c.Put(ctx, tr.table, &Put{Row: row, Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: row}}})
		if err == nil {
			tr.mu.Lock()
			tr.acked = append(tr.acked, row)
			var gets []Action
			for j := max(0, len(tr.acked)-4); j < len(tr.acked); j++ {
				gets = append(gets, &Get{Row: tr.acked[j]})
			}
			tr.mu.Unlock()
			var res []ActionResult
			res, err = tr.c.Multi(ctx, tr.table, gets)
			for k := 0; err == nil && k < len(res); k++ {
				if res[k].Err != nil {
					err = res[k].Err
				} else if v, _ := res[k].Result.Value("f", "q"); string(v) != string(gets[k].(*Get).Row) {
					err = fmt.Errorf("multi-get of acknowledged row %q returned %q", gets[k].(*Get).Row, v)
				}
			}
		}
		cancel()
		if err != nil {
			tr.mu.Lock()
			tr.errs = append(tr.errs, err)
			tr.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		tr.ok.Add(1)
	}
}

func (tr *traffic) halt() {
	close(tr.stop)
	tr.wg.Wait()
}

// verify reads every acknowledged row back.
func (tr *traffic) verify(t *testing.T) {
	t.Helper()
	ctx := testCtx(t)
	var gets []Action
	for _, r := range tr.acked {
		gets = append(gets, &Get{Row: r})
	}
	res, err := tr.c.Multi(ctx, tr.table, gets)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("reading acknowledged row %q: %v", tr.acked[i], r.Err)
		}
		if v, _ := r.Result.Value("f", "q"); string(v) != string(tr.acked[i]) {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged rows lost", lost, len(tr.acked))
	}
	t.Logf("%d acknowledged rows all read back", len(tr.acked))
}

func TestSplitUnderTraffic(t *testing.T) {
	t.Parallel() // each on its own table; they mostly wait on HBase
	c, ctx, table := testTable(t)
	before, err := c.locate(ctx, table, []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	tr := startTraffic(c, table, 3, 30*time.Second)
	time.Sleep(time.Second)
	for _, at := range []string{"p", "c", "w"} {
		if err := c.SplitRegion(ctx, table, []byte(at)); err != nil {
			tr.halt()
			t.Fatalf("SplitRegion(%s): %v", at, err)
		}
	}
	okAfterSplit := tr.ok.Load()
	time.Sleep(2 * time.Second)
	tr.halt()
	if len(tr.errs) > 0 {
		t.Fatalf("%d operations failed during the splits; first: %v", len(tr.errs), tr.errs[0])
	}
	if tr.ok.Load() == okAfterSplit {
		t.Fatal("no operation succeeded after the splits")
	}
	tr.verify(t)
	after, err := c.locate(ctx, table, []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	if string(after.start) != "p" || string(before.start) != "n" {
		t.Errorf("region of p: before split starts at %q, after at %q; want n, p", before.start, after.start)
	}
}

// TestRestartUnderTraffic kills a private HBase under traffic and starts it
// again: during the outage the client returns retryable errors; afterwards
// the same client serves again and every acknowledged write is there. After
// Close no goroutine is left. Not parallel: it counts goroutines, and
// sequential tests run before the parallel ones start.
func TestRestartUnderTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts an HBase: not in -short")
	}
	in := hbasetest.StartPrivate(t, "restart", 22381, 26200, 26220)
	baseline := runtime.NumGoroutine()
	c, err := New(Config{ZooKeeper: []string{in.ZK}, MaxRetries: 4, MaxBackoff: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	table := createTestTable(t, c)
	tr := startTraffic(c, table, 2, 3*time.Second)
	time.Sleep(2 * time.Second)
	if tr.ok.Load() == 0 {
		tr.halt()
		t.Fatalf("no traffic before the restart: %v", tr.errs)
	}
	in.Kill(t)
	killedAt := tr.ok.Load()
	time.Sleep(3 * time.Second)
	in.Start(t)
	// The same client serves again, without being re-created.
	deadline := time.Now().Add(3 * time.Minute)
	for tr.ok.Load() < killedAt+20 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	tr.halt()
	if tr.ok.Load() < killedAt+20 {
		t.Fatalf("client did not serve again after the restart; last errors: %v", tr.errs[max(0, len(tr.errs)-3):])
	}
	if len(tr.errs) == 0 {
		t.Error("no errors while HBase was down")
	}
	for _, err := range tr.errs {
		if !IsRetryable(err) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("non-retryable error during the outage: %v", err)
		}
	}
	t.Logf("%d errors during the outage, e.g. %v", len(tr.errs), tr.errs[0])
	tr.verify(t)
	// Drop the table now (its cleanup would run after Close).
	ctx := testCtx(t)
	_ = c.DisableTable(ctx, table)
	_ = c.DeleteTable(ctx, table)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	for end := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > baseline && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before New:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}
