package hbase

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func TestRetry(t *testing.T) {
	busy := &RemoteError{Class: "org.apache.hadoop.hbase.RegionTooBusyException", Kind: KindBusy}
	fatal := &RemoteError{Class: "org.apache.hadoop.hbase.TableNotFoundException", Kind: KindFatal}
	conn := fmt.Errorf("%w: dial: refused", ErrConnection)
	tests := []struct {
		name         string
		errs         []error // per attempt; the last repeats
		wantAttempts int
		wantErr      error // errors.Is target; nil = success
	}{
		{"success at once", []error{nil}, 1, nil},
		{"busy then success", []error{busy, busy, nil}, 3, nil},
		{"connection lost then success", []error{conn, nil}, 2, nil},
		{"fatal is not retried", []error{fatal}, 1, ErrTableNotFound},
		{"busy forever exhausts", []error{busy}, 5, ErrRetriesExhausted},
		{"connection forever exhausts", []error{conn}, 5, ErrConnection},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}, MaxRetries: 5, RetryBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			n := 0
			err = c.retry(context.Background(), "op", func(context.Context) error {
				e := tc.errs[min(n, len(tc.errs)-1)]
				n++
				return e
			})
			if n != tc.wantAttempts {
				t.Errorf("attempts = %d, want %d", n, tc.wantAttempts)
			}
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			// Exhausted retries stay recognizably retryable for the caller.
			if errors.Is(err, ErrRetriesExhausted) && !IsRetryable(err) {
				t.Errorf("exhausted error %v not retryable", err)
			}
		})
	}
}

func TestRetryStopsAtDeadline(t *testing.T) {
	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}, MaxRetries: 1000, RetryBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = c.retry(ctx, "op", func(context.Context) error { return fmt.Errorf("%w: refused", ErrConnection) })
	if !errors.Is(err, context.DeadlineExceeded) || !IsRetryable(err) {
		t.Fatalf("err = %v, want DeadlineExceeded wrapping the last retryable error", err)
	}
}

// TestUnreachableCluster: with nothing listening, calls fail within the
// ctx deadline with a retryable error, and Close leaves nothing running.
func TestUnreachableCluster(t *testing.T) {
	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}, MaxRetries: 3, RetryBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := c.Get(ctx, "t", &Get{Row: []byte("r")}); !IsRetryable(err) {
		t.Errorf("Get = %v, want a retryable error", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "t", &Get{Row: []byte("r")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if _, err := c.Multi(ctx, "t", []Action{&Get{Row: []byte("r")}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Multi after Close = %v, want ErrClosed", err)
	}
}

// TestMultiStopsLocatingWhenCtxEnds: a Multi whose ctx has ended does not
// look up the region of each of its actions (against a cluster that is down,
// every lookup would try ZooKeeper in turn, so a cancelled bulk write of
// thousands of actions kept its caller waiting).
func TestMultiStopsLocatingWhenCtxEnds(t *testing.T) {
	c, err := New(Config{ZooKeeper: []string{"127.0.0.1:1"}, MaxRetries: 3, RetryBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acts := make([]Action, 5000)
	for i := range acts {
		acts[i] = &Put{Row: []byte(fmt.Sprint(i)), Values: []Value{{Family: []byte("c"), Qualifier: []byte("q"), Value: []byte("v")}}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Multi(ctx, "t", acts); !errors.Is(err, context.Canceled) {
		t.Fatalf("Multi with a cancelled ctx: %v, want context.Canceled", err)
	}
	var m dto.Metric
	if err := c.m.cacheMisses.Write(&m); err != nil {
		t.Fatal(err)
	}
	if n := m.GetCounter().GetValue(); n != 0 {
		t.Errorf("%v region lookups after the ctx ended, want 0", n)
	}
}
