package hbase

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// CondMutation is one conditional mutation of CheckAndMutateMulti: Mutation
// (a *Put or *Delete of Check.Row) applies if Check holds.
type CondMutation struct {
	Check    Check
	Mutation Action
}

// CheckAndMutateMulti runs many independent CheckAndMutates on table with
// one MultiRequest per region server (servers in parallel) instead of one
// round trip each: every mutation is its own conditional RegionAction,
// atomic on its own row exactly as CheckAndMutate is, with no atomicity
// across rows. applied[i] reports whether muts[i] applied, errs[i] its
// error (retryable ones are retried like Multi's); err fails the whole call
// (bad arguments, closed client, ctx ended). As with CheckAndMutate, a
// mutation retried after a lost reply may report false although its first
// attempt applied. Needs HBase 2.4 or later (conditional RegionActions).
func (c *Client) CheckAndMutateMulti(ctx context.Context, table string, muts []CondMutation) (applied []bool, errs []error, err error) {
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	acts := make([]*pb.Action, len(muts))
	conds := make([]*pb.Condition, len(muts))
	for i, m := range muts {
		switch m.Mutation.(type) {
		case *Put, *Delete:
		default:
			return nil, nil, fmt.Errorf("%w: CheckAndMutateMulti item %d: want a *Put or *Delete, not %T", ErrInvalidArgument, i, m.Mutation)
		}
		if len(m.Check.Row) == 0 || string(m.Mutation.row()) != string(m.Check.Row) {
			return nil, nil, fmt.Errorf("%w: CheckAndMutateMulti item %d: row %q differs from mutation row %q (or is empty)", ErrInvalidArgument, i, m.Check.Row, m.Mutation.row())
		}
		var mp *pb.MutationProto
		var err error
		if p, ok := m.Mutation.(*Put); ok {
			mp, err = putNoData(p)
		} else {
			mp, err = c.mutation(m.Mutation)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("CheckAndMutateMulti item %d: %w", i, err)
		}
		acts[i] = &pb.Action{Index: proto.Uint32(0), Mutation: mp}
		if conds[i], err = condition(m.Check); err != nil {
			return nil, nil, err
		}
	}
	applied = make([]bool, len(muts))
	errs = make([]error, len(muts))
	todo := make([]int, len(muts))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= c.cfg.MaxRetries {
				for _, i := range todo {
					errs[i] = fmt.Errorf("%w: CheckAndMutateMulti after %d attempts: %w", ErrRetriesExhausted, attempt, errs[i])
				}
				break
			}
			c.m.retries.WithLabelValues("CheckAndMutateMulti").Add(float64(len(todo)))
			if err := c.sleep(ctx, attempt); err != nil {
				return nil, nil, fmt.Errorf("hbase: CheckAndMutateMulti: %w", err)
			}
		}
		todo = c.condRound(ctx, table, muts, acts, conds, todo, applied, errs)
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("hbase: CheckAndMutateMulti: %w", err)
		}
	}
	return applied, errs, nil
}

// condition is the protobuf condition of a Check.
func condition(chk Check) (*pb.Condition, error) {
	cmp, err := proto.Marshal(&pb.BinaryComparator{Comparable: &pb.ByteArrayComparable{Value: chk.Value}})
	if err != nil {
		return nil, err
	}
	return &pb.Condition{
		Row: chk.Row, Family: chk.Family, Qualifier: chk.Qualifier,
		CompareType: pb.CompareType(chk.Op).Enum(),
		Comparator:  &pb.Comparator{Name: proto.String("org.apache.hadoop.hbase.filter.BinaryComparator"), SerializedComparator: cmp},
	}, nil
}

// condItem is one conditional mutation located on its region.
type condItem struct {
	i int
	r *region
}

// condRound sends the todo items once, one request per server, and returns
// those to retry.
func (c *Client) condRound(ctx context.Context, table string, muts []CondMutation, acts []*pb.Action, conds []*pb.Condition, todo []int, applied []bool, errs []error) []int {
	byServer := map[string][]condItem{}
	var retry []int
	for _, i := range todo {
		r, err := c.locate(ctx, table, muts[i].Check.Row)
		if err != nil {
			errs[i] = err
			if IsRetryable(err) {
				retry = append(retry, i)
			}
			continue
		}
		byServer[r.addr] = append(byServer[r.addr], condItem{i, r})
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex // guards retry, applied and errs across the per-server goroutines
	)
	for addr, items := range byServer {
		wg.Go(func() {
			res := c.condServer(ctx, addr, items, muts, acts, conds)
			mu.Lock()
			defer mu.Unlock()
			for k, it := range items {
				applied[it.i], errs[it.i] = res[k].ok, res[k].err
				if res[k].err != nil {
					if needsRelocate(res[k].err) {
						c.regions.drop(it.r)
					}
					if IsRetryable(res[k].err) {
						retry = append(retry, it.i)
					}
				}
			}
		})
	}
	wg.Wait()
	return retry
}

type condResult struct {
	ok  bool
	err error
}

// condServer sends one MultiRequest of conditional RegionActions to addr.
func (c *Client) condServer(ctx context.Context, addr string, items []condItem, muts []CondMutation, acts []*pb.Action, conds []*pb.Condition) []condResult {
	out := make([]condResult, len(items))
	failAll := func(err error) []condResult {
		for k := range out {
			out[k] = condResult{err: err}
		}
		return out
	}
	req := &pb.MultiRequest{}
	var cells []byte
	for _, it := range items {
		req.RegionAction = append(req.RegionAction, &pb.RegionAction{Region: it.r.spec(), Action: []*pb.Action{acts[it.i]}, Condition: conds[it.i]})
		if p, ok := muts[it.i].Mutation.(*Put); ok {
			cells = appendPutCells(cells, p)
		}
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
	if len(rars) != len(items) {
		return failAll(protocolErrorf("CheckAndMutateMulti: %d region results for %d conditional actions", len(rars), len(items)))
	}
	for k, rar := range rars {
		if ex := rar.GetException(); ex != nil {
			out[k] = condResult{err: newRemoteError(ex.GetName(), string(ex.GetValue()), false)}
			continue
		}
		for _, roe := range rar.GetResultOrException() {
			if ex := roe.GetException(); ex != nil {
				out[k].err = newRemoteError(ex.GetName(), string(ex.GetValue()), false)
				continue
			}
			// Consume the result's cells (none for a Put or Delete) so the
			// cell block stays in step.
			if _, err := toResult(roe.GetResult(), cb); err != nil {
				return failAll(err)
			}
		}
		if out[k].err == nil {
			out[k].ok = rar.GetProcessed()
		}
	}
	return out
}
