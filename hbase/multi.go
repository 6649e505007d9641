package hbase

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
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
	// Encode every action once, so a retried Increment keeps its nonce.
	acts := make([]*pb.Action, len(actions))
	hasNonce := false
	for i, a := range actions {
		if len(a.row()) == 0 {
			return nil, fmt.Errorf("%w: Multi action %d: empty row key", ErrInvalidArgument, i)
		}
		pa := &pb.Action{Index: proto.Uint32(uint32(i))}
		if g, ok := a.(*Get); ok {
			pa.Get = g.proto()
		} else if p, ok := a.(*Put); ok {
			mp, err := putNoData(p)
			if err != nil {
				return nil, fmt.Errorf("Multi action %d: %w", i, err)
			}
			pa.Mutation = mp
		} else {
			mp, err := c.mutation(a)
			if err != nil {
				return nil, fmt.Errorf("Multi action %d: %w", i, err)
			}
			pa.Mutation = mp
			hasNonce = hasNonce || mp.Nonce != nil
		}
		acts[i] = pa
	}
	todo := make([]int, len(actions))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= c.cfg.MaxRetries {
				for _, i := range todo {
					out[i].Err = fmt.Errorf("%w: Multi after %d attempts: %w", ErrRetriesExhausted, attempt, out[i].Err)
				}
				break
			}
			c.m.retries.WithLabelValues("Multi").Add(float64(len(todo)))
			if err := c.sleep(ctx, attempt); err != nil {
				return nil, fmt.Errorf("hbase: Multi: %w", err)
			}
		}
		todo = c.multiRound(ctx, table, actions, acts, todo, hasNonce, out)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hbase: Multi: %w", err)
		}
	}
	return out, nil
}

// regionBatch is the actions of one region in a round.
type regionBatch struct {
	r       *region
	indexes []int
}

// multiRound sends the todo actions once and returns those to retry.
func (c *Client) multiRound(ctx context.Context, table string, actions []Action, acts []*pb.Action, todo []int, hasNonce bool, out []ActionResult) []int {
	byServer := map[string][]*regionBatch{}
	byRegion := map[*region]*regionBatch{}
	var retry []int
	for n, i := range todo {
		// A ctx that ended stops the locating: with HBase down, each
		// locate of a large batch would otherwise try ZooKeeper in turn.
		if err := ctx.Err(); err != nil {
			for _, j := range todo[n:] {
				out[j] = ActionResult{Err: err}
			}
			return nil
		}
		r, err := c.locate(ctx, table, actions[i].row())
		if err != nil {
			out[i] = ActionResult{Err: err}
			if IsRetryable(err) {
				retry = append(retry, i)
			}
			continue
		}
		b := byRegion[r]
		if b == nil {
			b = &regionBatch{r: r}
			byRegion[r] = b
			addr := r.addr
			byServer[addr] = append(byServer[addr], b)
		}
		b.indexes = append(b.indexes, i)
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex // guards retry and out across the per-server goroutines
	)
	for addr, batches := range byServer {
		wg.Go(func() {
			again := c.multiServer(ctx, addr, batches, actions, acts, hasNonce, out, &mu)
			mu.Lock()
			retry = append(retry, again...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return retry
}

// multiServer sends one MultiRequest to addr and files its results.
func (c *Client) multiServer(ctx context.Context, addr string, batches []*regionBatch, actions []Action, acts []*pb.Action, hasNonce bool, out []ActionResult, mu *sync.Mutex) (retry []int) {
	failAll := func(err error) []int {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range batches {
			if needsRelocate(err) {
				c.regions.drop(b.r)
			}
			for _, i := range b.indexes {
				out[i] = ActionResult{Err: err}
				if IsRetryable(err) {
					retry = append(retry, i)
				}
			}
		}
		return retry
	}
	req := &pb.MultiRequest{}
	if hasNonce {
		req.NonceGroup = proto.Uint64(c.nonceGroup)
	}
	// The cells of the Puts, in the order their actions appear in req.
	var cells []byte
	for _, b := range batches {
		ra := &pb.RegionAction{Region: b.r.spec()}
		for _, i := range b.indexes {
			ra.Action = append(ra.Action, acts[i])
			if p, ok := actions[i].(*Put); ok {
				cells = appendPutCells(cells, p)
			}
		}
		req.RegionAction = append(req.RegionAction, ra)
	}
	cn, err := c.getConn(ctx, addr, serviceClient)
	if err != nil {
		return failAll(err)
	}
	var resp pb.MultiResponse
	cb, err := c.rpcCells(ctx, cn, "Multi", req, cells, &resp)
	if err != nil {
		return failAll(err)
	}
	rars := resp.GetRegionActionResult()
	if len(rars) != len(batches) {
		return failAll(protocolErrorf("Multi: %d region results for %d regions", len(rars), len(batches)))
	}
	mu.Lock()
	defer mu.Unlock()
	// Cells in the cell block follow the order of the results.
	for bi, rar := range rars {
		b := batches[bi]
		if ex := rar.GetException(); ex != nil {
			err := newRemoteError(ex.GetName(), string(ex.GetValue()), false)
			if needsRelocate(err) {
				c.regions.drop(b.r)
			}
			for _, i := range b.indexes {
				out[i] = ActionResult{Err: err}
				if err.Retryable() {
					retry = append(retry, i)
				}
			}
			continue
		}
		seen := make(map[uint32]bool, len(b.indexes))
		for _, roe := range rar.GetResultOrException() {
			idx := roe.GetIndex()
			if int(idx) >= len(out) || seen[idx] {
				return append(retry, failAllLocked(batches, out, protocolErrorf("Multi: result for unknown or repeated action %d", idx))...)
			}
			seen[idx] = true
			if ex := roe.GetException(); ex != nil {
				err := newRemoteError(ex.GetName(), string(ex.GetValue()), false)
				if needsRelocate(err) {
					c.regions.drop(b.r)
				}
				out[idx] = ActionResult{Err: err}
				if err.Retryable() {
					retry = append(retry, int(idx))
				}
				continue
			}
			res, err := toResult(roe.GetResult(), cb)
			if err != nil {
				return append(retry, failAllLocked(batches, out, err)...)
			}
			out[idx] = ActionResult{Result: res}
		}
		for _, i := range b.indexes {
			if !seen[uint32(i)] {
				out[i] = ActionResult{Err: protocolErrorf("Multi: no result for action %d", i)}
			}
		}
	}
	return retry
}

// failAllLocked marks every action of batches failed with a non-retryable
// protocol error; the caller holds the results mutex.
func failAllLocked(batches []*regionBatch, out []ActionResult, err error) []int {
	for _, b := range batches {
		for _, i := range b.indexes {
			out[i] = ActionResult{Err: err}
		}
	}
	return nil
}
