package hbase

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/simdex/simdex/hbase/internal/pb"
)

// CondMutation is one conditional mutation of CheckAndMutateMulti: Mutation
// (a *Put or *Delete of Check.Row) applies if Check holds. With an empty
// Check.Row the item is unconditional: Mutation (a *Put, *Delete or
// *Increment of any row) rides in the same request as the conditional ones,
// e.g. a counter update sent with the lock releases it precedes (one round
// trip instead of two).
type CondMutation struct {
	Check    Check
	Mutation Action
}

// CheckAndMutateMulti runs many independent CheckAndMutates on table with
// one MultiRequest per region server (servers in parallel) instead of one
// round trip each: every mutation is its own conditional RegionAction,
// atomic on its own row exactly as CheckAndMutate is, with no atomicity
// across rows and no order among the items of one request (an unconditional
// item is a plain RegionAction; it counts as applied when it succeeded).
// applied[i] reports whether muts[i] applied, errs[i] its
// error (retryable ones are retried like Multi's); err fails the whole call
// (bad arguments, closed client, ctx ended). As with CheckAndMutate, a
// mutation retried after a lost reply may report false although its first
// attempt applied. Needs HBase 2.4 or later (conditional RegionActions).
func (c *Client) CheckAndMutateMulti(ctx context.Context, table string, muts []CondMutation) (applied []bool, errs []error, err error) {
	if c.isClosed() {
		return nil, nil, ErrClosed
	}
	acts := make([][]byte, len(muts))
	conds := make([][]byte, len(muts))
	hasNonce := false
	for i, m := range muts {
		uncond := len(m.Check.Row) == 0
		switch m.Mutation.(type) {
		case *Put, *Delete:
		case *Increment:
			if !uncond {
				return nil, nil, fmt.Errorf("%w: CheckAndMutateMulti item %d: an *Increment must be unconditional", ErrInvalidArgument, i)
			}
		default:
			return nil, nil, fmt.Errorf("%w: CheckAndMutateMulti item %d: want a *Put, *Delete or (unconditional) *Increment, not %T", ErrInvalidArgument, i, m.Mutation)
		}
		if m.Mutation == nil || len(m.Mutation.row()) == 0 || !uncond && string(m.Mutation.row()) != string(m.Check.Row) {
			return nil, nil, fmt.Errorf("%w: CheckAndMutateMulti item %d: row %q differs from mutation row (or is empty)", ErrInvalidArgument, i, m.Check.Row)
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
		hasNonce = hasNonce || mp.Nonce != nil
		if acts[i], err = appendMutationAction(nil, 0, mp); err != nil {
			return nil, nil, fmt.Errorf("hbase: encode CheckAndMutateMulti item %d: %w", i, err)
		}
		if uncond {
			continue
		}
		cond, err := condition(m.Check)
		if err != nil {
			return nil, nil, err
		}
		if conds[i], err = proto.Marshal(cond); err != nil {
			return nil, nil, fmt.Errorf("hbase: encode CheckAndMutateMulti condition %d: %w", i, err)
		}
	}
	applied = make([]bool, len(muts))
	errs = make([]error, len(muts))
	err = c.batchRetry(ctx, "CheckAndMutateMulti", len(muts), func(i int) *error { return &errs[i] }, func(todo []int) []int {
		return c.condRound(ctx, table, muts, acts, conds, hasNonce, todo, applied, errs)
	})
	if err != nil {
		return nil, nil, err
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

// condRound sends the todo items once, one request per server, and returns
// those to retry.
func (c *Client) condRound(ctx context.Context, table string, muts []CondMutation, acts, conds [][]byte, hasNonce bool, todo []int, applied []bool, errs []error) []int {
	batches, retry := c.locateByServer(ctx, table, todo,
		func(i int) []byte { return muts[i].Mutation.row() },
		func(i int, err error) { errs[i] = err })
	var mu sync.Mutex // guards retry, applied and errs across the per-server calls
	eachServer(batches, func(b serverBatch) {
		res := c.condServer(ctx, b, muts, acts, conds, hasNonce)
		mu.Lock()
		defer mu.Unlock()
		for k, it := range b.items {
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
	return retry
}

type condResult struct {
	ok  bool
	err error
}

// condServer sends one MultiRequest of RegionActions (one per item,
// conditional unless the item is not) to the batch's server.
func (c *Client) condServer(ctx context.Context, batch serverBatch, muts []CondMutation, acts, conds [][]byte, hasNonce bool) []condResult {
	out := make([]condResult, len(batch.items))
	failAll := func(err error) []condResult {
		for k := range out {
			out[k] = condResult{err: err}
		}
		return out
	}
	ras := make([]regionActionEnc, len(batch.items))
	var cells []byte
	for k, it := range batch.items {
		ras[k] = regionActionEnc{region: it.r.specEnc(), actions: [][]byte{acts[it.i]}, condition: conds[it.i]}
		if p, ok := muts[it.i].Mutation.(*Put); ok {
			cells = appendPutCells(cells, p)
		}
	}
	rars, cb, err := c.sendMulti(ctx, batch.addr, ras, cells, hasNonce, false)
	if err != nil {
		return failAll(err)
	}
	for k := range rars {
		rar := &rars[k]
		if ex := rar.exception; ex != nil {
			out[k] = condResult{err: newRemoteError(ex.name, string(ex.value), false)}
			continue
		}
		for ri := range rar.roes {
			roe := &rar.roes[ri]
			if ex := roe.exception; ex != nil {
				out[k].err = newRemoteError(ex.name, string(ex.value), false)
				continue
			}
			// Consume the result's cells (none for a Put or Delete) so the
			// cell block stays in step.
			if _, err := toResultMsg(&roe.result, cb); err != nil {
				return failAll(err)
			}
		}
		if out[k].err == nil {
			// A conditional RegionAction says whether its condition held;
			// a plain one applied when it did not fail.
			out[k].ok = rar.processed || conds[batch.items[k].i] == nil
		}
	}
	return out
}
