package hbase

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ActionResult is the outcome of one action of a Multi: Result for a *Get
// or *Increment (empty for *Put and *Delete), or Err.
type ActionResult struct {
	Result *Result
	Err    error
}

// Multi runs actions on table, grouped by region and server: one MultiRequest
// per server, the servers in parallel. Results are in the order of actions.
// Actions that fail with retryable errors (region moved, server busy, lost
// connection) are re-located and retried; each action gets its own result,
// so one bad action does not fail the others. The returned error is only
// for the call as a whole (bad arguments, closed client, ctx ended).
func (c *Client) Multi(ctx context.Context, table string, actions []Action) ([]ActionResult, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	out := make([]ActionResult, len(actions))
	// Encode every action once (one buffer for all), so a retried
	// Increment keeps its nonce and a retry costs no encoding.
	acts := make([][]byte, len(actions))
	var enc []byte
	ends := make([]int, len(actions))
	hasNonce := false
	for i, a := range actions {
		if len(a.row()) == 0 {
			return nil, fmt.Errorf("%w: Multi action %d: empty row key", ErrInvalidArgument, i)
		}
		var err error
		if g, ok := a.(*Get); ok {
			enc = appendGetAction(enc, uint32(i), g)
		} else if p, ok := a.(*Put); ok {
			mp, perr := putNoData(p)
			if perr != nil {
				return nil, fmt.Errorf("Multi action %d: %w", i, perr)
			}
			enc, err = appendMutationAction(enc, uint32(i), mp)
		} else {
			mp, merr := c.mutation(a)
			if merr != nil {
				return nil, fmt.Errorf("Multi action %d: %w", i, merr)
			}
			hasNonce = hasNonce || mp.Nonce != nil
			enc, err = appendMutationAction(enc, uint32(i), mp)
		}
		if err != nil {
			return nil, fmt.Errorf("hbase: encode Multi action %d: %w", i, err)
		}
		ends[i] = len(enc)
	}
	for i := range acts {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		acts[i] = enc[start:ends[i]:ends[i]]
	}
	err := c.batchRetry(ctx, "Multi", len(actions), func(i int) *error { return &out[i].Err }, func(todo []int) []int {
		return c.multiRound(ctx, table, actions, acts, todo, hasNonce, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchRetry runs round over items 0..n-1 and again over the items it
// returns (those that failed retryably), with backoff, until none are left,
// the retries run out (each left item's error, *errOf(i), is then wrapped
// in ErrRetriesExhausted) or ctx ends (the error returned).
func (c *Client) batchRetry(ctx context.Context, op string, n int, errOf func(int) *error, round func(todo []int) []int) error {
	todo := make([]int, n)
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= c.cfg.MaxRetries {
				for _, i := range todo {
					e := errOf(i)
					*e = fmt.Errorf("%w: %s after %d attempts: %w", ErrRetriesExhausted, op, attempt, *e)
				}
				return nil
			}
			c.m.retries.WithLabelValues(op).Add(float64(len(todo)))
			if err := c.sleep(ctx, attempt); err != nil {
				return fmt.Errorf("hbase: %s: %w", op, err)
			}
		}
		todo = round(todo)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("hbase: %s: %w", op, err)
		}
	}
	return nil
}

// located is one item of a batch call (an index into the caller's
// actions) and the region holding its row.
type located struct {
	i int
	r *region
}

// serverBatch is the located items of one round bound for one server.
type serverBatch struct {
	addr  string
	items []located
}

// locateByServer locates the rows of the todo items (row(i) is item i's
// row) and groups them by server, servers and items in first-seen order.
// An item that cannot be located gets its error through setErr and, if
// the error is retryable, is returned in retry. A ctx that has ended stops
// the locating (with HBase down, each locate of a large batch would
// otherwise try ZooKeeper in turn): the rest get ctx's error.
func (c *Client) locateByServer(ctx context.Context, table string, todo []int, row func(int) []byte, setErr func(int, error)) (batches []serverBatch, retry []int) {
	for n, i := range todo {
		if err := ctx.Err(); err != nil {
			for _, j := range todo[n:] {
				setErr(j, err)
			}
			return batches, retry
		}
		r, err := c.locate(ctx, table, row(i))
		if err != nil {
			setErr(i, err)
			if IsRetryable(err) {
				retry = append(retry, i)
			}
			continue
		}
		k := 0
		for k < len(batches) && batches[k].addr != r.addr {
			k++
		}
		if k == len(batches) {
			batches = append(batches, serverBatch{addr: r.addr})
		}
		batches[k].items = append(batches[k].items, located{i, r})
	}
	return batches, retry
}

// maxRequestActions bounds the actions of one MultiRequest. The region
// server runs a request in one handler, its actions one after another, so
// a batch insert's 8,000 band-row reads or writes in one request keep one
// core busy while the others idle; split into requests of at most this
// many, sent at once, several handlers share them. Small enough that a
// large batch uses every core, large enough that the requests' fixed cost
// stays small beside their actions'.
const maxRequestActions = 1000

// splitBatches splits every batch of more than max items into batches of
// at most max items for the same server (contiguous runs, so a region's
// items mostly stay in one request). The items of a batch call have no
// order among them (HBase does not order the actions of one request
// either), so the parts may run concurrently.
func splitBatches(batches []serverBatch, max int) []serverBatch {
	n := 0
	for _, b := range batches {
		n += (len(b.items) + max - 1) / max
	}
	if n == len(batches) {
		return batches
	}
	out := make([]serverBatch, 0, n)
	for _, b := range batches {
		for len(b.items) > max {
			out = append(out, serverBatch{addr: b.addr, items: b.items[:max:max]})
			b.items = b.items[max:]
		}
		out = append(out, b)
	}
	return out
}

// eachServer runs fn for every batch, the servers (and the parts of a
// large batch, splitBatches) in parallel, and waits. With one batch (the
// common case of a small Multi) it runs on the caller's goroutine: no
// goroutine to start and hand the result back.
func eachServer(batches []serverBatch, fn func(serverBatch)) {
	batches = splitBatches(batches, maxRequestActions)
	if len(batches) == 1 {
		fn(batches[0])
		return
	}
	var wg sync.WaitGroup
	for _, b := range batches {
		wg.Go(func() { fn(b) })
	}
	wg.Wait()
}

// multiBufs holds request buffers of Multi calls: the encoded request
// message of a call is dead once its frame is queued on the connection.
var multiBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// sendMulti sends one MultiRequest of ras (with cells as its cell block) to
// addr and returns its decoded region results and cell block. With gets
// (every action a Get), it may share one MultiRequest with concurrent
// calls (coalesce.go).
func (c *Client) sendMulti(ctx context.Context, addr string, ras []regionActionEnc, cells []byte, hasNonce, gets bool) ([]regionActionResult, *cellBlock, error) {
	cn, err := c.getConn(ctx, addr, serviceClient)
	if err != nil {
		return nil, nil, err
	}
	if gets && len(cells) == 0 && !hasNonce && c.cfg.MultiInFlight > 0 && countActions(ras) <= maxCoalescedActions {
		return c.multiGets(ctx, cn, ras)
	}
	bp := multiBufs.Get().(*[]byte)
	body := appendMultiRequest((*bp)[:0], ras, c.nonceGroup, hasNonce)
	start := time.Now()
	r, err := cn.callRaw(ctx, "Multi", body, cells)
	c.observe("Multi", start)
	if cap(body) <= 64<<10 {
		*bp = body[:0]
		multiBufs.Put(bp)
	}
	if err != nil {
		return nil, nil, err
	}
	rars, err := decodeMultiResponse(r.body, make([]regionActionResult, 0, len(ras)))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: Multi reply: %w", addr, err)
	}
	if len(rars) != len(ras) {
		return nil, nil, protocolErrorf("Multi: %d region results for %d region actions", len(rars), len(ras))
	}
	var cb *cellBlock
	if r.cellBlock != nil {
		cb = &cellBlock{buf: r.cellBlock}
	}
	return rars, cb, nil
}

// maxCoalescedActions: a Multi of gets with more actions than this is sent
// on its own, never queued to share a request (coalesce.go): its own
// actions outweigh a request's fixed cost, and the parts of a large read
// (splitBatches) must not be merged back into one request.
const maxCoalescedActions = 256

func countActions(ras []regionActionEnc) int {
	n := 0
	for _, ra := range ras {
		n += len(ra.actions)
	}
	return n
}

// multiRound sends the todo actions once and returns those to retry.
func (c *Client) multiRound(ctx context.Context, table string, actions []Action, acts [][]byte, todo []int, hasNonce bool, out []ActionResult) []int {
	batches, retry := c.locateByServer(ctx, table, todo,
		func(i int) []byte { return actions[i].row() },
		func(i int, err error) { out[i] = ActionResult{Err: err} })
	var mu sync.Mutex // guards retry and out across the per-server calls
	eachServer(batches, func(b serverBatch) {
		again := c.multiServer(ctx, b, actions, acts, hasNonce, out, &mu)
		mu.Lock()
		retry = append(retry, again...)
		mu.Unlock()
	})
	return retry
}

// regionGroup is the actions of one region within a server's request.
type regionGroup struct {
	r       *region
	indexes []int
}

// multiServer sends one MultiRequest for batch (one RegionAction per
// region) and files its results.
func (c *Client) multiServer(ctx context.Context, batch serverBatch, actions []Action, acts [][]byte, hasNonce bool, out []ActionResult, mu *sync.Mutex) (retry []int) {
	var groups []regionGroup
	for _, it := range batch.items {
		k := len(groups) - 1
		if k < 0 || groups[k].r != it.r {
			k = 0
			for k < len(groups) && groups[k].r != it.r {
				k++
			}
			if k == len(groups) {
				groups = append(groups, regionGroup{r: it.r})
			}
		}
		groups[k].indexes = append(groups[k].indexes, it.i)
	}
	failAll := func(err error) []int {
		mu.Lock()
		defer mu.Unlock()
		for _, g := range groups {
			if needsRelocate(err) {
				c.regions.drop(g.r)
			}
			for _, i := range g.indexes {
				out[i] = ActionResult{Err: err}
				if IsRetryable(err) {
					retry = append(retry, i)
				}
			}
		}
		return retry
	}
	// The cells of the Puts, in the order their actions appear in the
	// request.
	var cells []byte
	gets := true
	ras := make([]regionActionEnc, len(groups))
	for k, g := range groups {
		ras[k] = regionActionEnc{region: g.r.specEnc(), actions: make([][]byte, len(g.indexes))}
		for j, i := range g.indexes {
			ras[k].actions[j] = acts[i]
			switch a := actions[i].(type) {
			case *Get:
			case *Put:
				gets = false
				cells = appendPutCells(cells, a)
			default:
				gets = false
			}
		}
	}
	rars, cb, err := c.sendMulti(ctx, batch.addr, ras, cells, hasNonce, gets)
	if err != nil {
		return failAll(err)
	}
	seen := make([]bool, len(out)) // actions answered in this reply
	mu.Lock()
	defer mu.Unlock()
	// Cells in the cell block follow the order of the results.
	for k := range rars {
		rar := &rars[k]
		g := groups[k]
		if ex := rar.exception; ex != nil {
			err := newRemoteError(ex.name, string(ex.value), false)
			if needsRelocate(err) {
				c.regions.drop(g.r)
			}
			for _, i := range g.indexes {
				out[i] = ActionResult{Err: err}
				if err.Retryable() {
					retry = append(retry, i)
				}
			}
			continue
		}
		for ri := range rar.roes {
			roe := &rar.roes[ri]
			idx := roe.index
			if int(idx) >= len(out) || seen[idx] {
				return append(retry, failAllLocked(groups, out, protocolErrorf("Multi: result for unknown or repeated action %d", idx))...)
			}
			seen[idx] = true
			if ex := roe.exception; ex != nil {
				err := newRemoteError(ex.name, string(ex.value), false)
				if needsRelocate(err) {
					c.regions.drop(g.r)
				}
				out[idx] = ActionResult{Err: err}
				if err.Retryable() {
					retry = append(retry, int(idx))
				}
				continue
			}
			res, err := toResultMsg(&roe.result, cb)
			if err != nil {
				return append(retry, failAllLocked(groups, out, err)...)
			}
			out[idx] = ActionResult{Result: res}
		}
		for _, i := range g.indexes {
			if !seen[i] {
				out[i] = ActionResult{Err: protocolErrorf("Multi: no result for action %d", i)}
			}
		}
	}
	return retry
}

// failAllLocked marks every action of groups failed with a non-retryable
// protocol error; the caller holds the results mutex.
func failAllLocked(groups []regionGroup, out []ActionResult, err error) []int {
	for _, g := range groups {
		for _, i := range g.indexes {
			out[i] = ActionResult{Err: err}
		}
	}
	return nil
}
