package kvindex

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBatchContextEnd checks how a group's batch context ends: with
// DeadlineExceeded when its members ran out of time (the server answers
// 503), with Canceled only when every member was cancelled (their clients
// went away). Members running out of time at the very moment of the batch's
// own deadline once raced it and ended the batch Canceled; the tiny
// deadlines and the repetitions give that race every chance.
func TestBatchContextEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		// members builds the members' contexts; end ends the ones that
		// do not end by themselves.
		members func() (ctxs []context.Context, end func())
		want    error
	}{
		{"all out of time, same deadline", func() ([]context.Context, func()) {
			d := time.Now().Add(time.Millisecond)
			a, ca := context.WithDeadline(context.Background(), d)
			b, cb := context.WithDeadline(context.Background(), d)
			return []context.Context{a, b}, func() { <-a.Done(); <-b.Done(); ca(); cb() }
		}, context.DeadlineExceeded},
		{"one out of time", func() ([]context.Context, func()) {
			a, ca := context.WithTimeout(context.Background(), time.Millisecond)
			return []context.Context{a}, func() { <-a.Done(); ca() }
		}, context.DeadlineExceeded},
		{"all cancelled", func() ([]context.Context, func()) {
			a, ca := context.WithTimeout(context.Background(), time.Hour)
			b, cb := context.WithCancel(context.Background())
			return []context.Context{a, b}, func() { ca(); cb() }
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 200 {
				ctxs, end := tc.members()
				bctx, cancel := batchContext(ctxs)
				end()
				<-bctx.Done()
				err := bctx.Err()
				cancel()
				if !errors.Is(err, tc.want) {
					t.Fatalf("batch context ended with %v, want %v", err, tc.want)
				}
			}
		})
	}
}
