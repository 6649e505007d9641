package ctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/hbasestore"
)

var writerLeaseVerb = Verb{
	Name:  "writer-lease",
	Usage: "on|off (--data-dir DIR | --hbase-zk HOST:PORT [--hbase-namespace NS] --writers-stopped)",
	Summary: "make the index one whose writers take turns under one writer lease (on: format 10, one writing server at a time, no per-insert locks) " +
		"or one whose writers share per-insert lease locks (off: format 9); the way writers exclude each other changes, so on HBase stop every process " +
		"that writes to the index first and say so with --writers-stopped",
	Run: runWriterLease,
}

type writerLeaseArgs struct {
	storeChoice
	On             bool
	WritersStopped bool
}

func parseWriterLease(env *Env, args []string) (writerLeaseArgs, error) {
	c := writerLeaseArgs{storeChoice: defaultStoreChoice()}
	s := newSet(env, hbaseExample)
	c.flags(s)
	s.Flags().BoolVar(&c.WritersStopped, "writers-stopped", false, "no process writes to the index while the switch runs (required on HBase)")
	pos, err := parse(env, s, args)
	if err != nil {
		return c, err
	}
	if len(pos) != 1 || (pos[0] != "on" && pos[0] != "off") {
		return c, fmt.Errorf("%w: writer-lease takes one argument, on or off", ErrUsage)
	}
	c.On = pos[0] == "on"
	c.settle(s)
	return c, c.validate("writer-lease")
}

func runWriterLease(ctx context.Context, env *Env, args []string) error {
	c, err := parseWriterLease(env, args)
	if err != nil {
		return err
	}
	st, _, err := c.store(slog.New(slog.NewTextHandler(env.Stderr, nil))).Open(ctx)
	if err != nil {
		return err
	}
	if _, ok := st.(*hbasestore.Store); ok && !c.WritersStopped {
		// A server that opened the index before keeps excluding the others
		// the old way until it reopens it, beside those that open it after.
		return errors.Join(fmt.Errorf("%w: switching the writer lease changes how the processes writing to the index exclude each other: stop every one (servers, bulk loads, compaction), then run writer-lease again with --writers-stopped", ErrUsage), st.Close())
	}
	from, to, err := kvindex.SetWriterLease(ctx, st, c.On)
	if err == nil {
		printFormatChange(env, from, to)
	}
	return errors.Join(err, st.Close())
}
