package hbasestore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

// MutateUnordered writes the tables at once with Mutate's effect: cells
// coalesced per cell, a row deleted and written again in one call holds
// the new cells, counters add up; and a batch larger than one request
// (several requests to the region server at once) is written whole. When
// one table's writes fail, the call fails with a store error.
func TestMutateUnordered(t *testing.T) {
	s := openFresh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Mutate(ctx, []storage.Mutation{{Kind: storage.Put, Table: storage.TableFP, Row: []byte("r"), Qualifier: []byte("old"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	muts := []storage.Mutation{
		{Kind: storage.Put, Table: storage.TableIndex, Row: []byte("i"), Qualifier: []byte("a"), Value: []byte("x")},
		{Kind: storage.Put, Table: storage.TableIndex, Row: []byte("i"), Qualifier: []byte("a"), Value: []byte("y")}, // later wins
		{Kind: storage.DeleteRow, Table: storage.TableFP, Row: []byte("r")},
		{Kind: storage.Put, Table: storage.TableFP, Row: []byte("r"), Qualifier: []byte("new"), Value: []byte("2")},
		{Kind: storage.Add, Table: storage.TableMeta, Row: []byte("c"), Qualifier: []byte("n"), Delta: 2},
		{Kind: storage.Add, Table: storage.TableMeta, Row: []byte("c"), Qualifier: []byte("n"), Delta: 3},
	}
	const bandRows = 2500 // more than one request's worth of actions
	for i := range bandRows {
		muts = append(muts, storage.Mutation{Kind: storage.Put, Table: storage.TableBands, Row: fmt.Appendf(nil, "b%05d", i), Qualifier: []byte("d"), Value: []byte{}})
	}
	if err := s.MutateUnordered(ctx, muts); err != nil {
		t.Fatal(err)
	}
	keys := []storage.RowKey{{Table: storage.TableIndex, Key: []byte("i")}, {Table: storage.TableFP, Key: []byte("r")}, {Table: storage.TableMeta, Key: []byte("c")}}
	for i := range bandRows {
		keys = append(keys, storage.RowKey{Table: storage.TableBands, Key: fmt.Appendf(nil, "b%05d", i)})
	}
	rows, err := s.Get(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(r storage.Row) string {
		var out string
		for _, c := range r.Cells {
			out += fmt.Sprintf("%s=%x ", c.Qualifier, c.Value)
		}
		return out
	}
	for i, want := range []string{"a=79 ", "new=32 ", "n=0000000000000005 "} {
		if got := cell(rows[i]); got != want {
			t.Fatalf("row %s of %s: %q, want %q", keys[i].Key, keys[i].Table, got, want)
		}
	}
	for i, r := range rows[3:] {
		if got := cell(r); got != "d= " {
			t.Fatalf("band row %d: %q, want its cell", i, got)
		}
	}

	// Without the fp table the fp writes fail, and so does the call.
	c := s.Client()
	fp := hbasestore.TableName(s.Config().Namespace, storage.TableFP)
	if err := c.DisableTable(ctx, fp); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTable(ctx, fp); err != nil {
		t.Fatal(err)
	}
	err = s.MutateUnordered(ctx, []storage.Mutation{
		{Kind: storage.Put, Table: storage.TableIndex, Row: []byte("i2"), Qualifier: []byte("a"), Value: []byte("x")},
		{Kind: storage.Put, Table: storage.TableFP, Row: []byte("r2"), Qualifier: []byte("a"), Value: []byte("x")},
	})
	if !errors.Is(err, storage.ErrStore) {
		t.Fatalf("MutateUnordered with the fp table gone: %v, want a store error", err)
	}
	// The cleanup's drop opens a store, which a missing table prevents:
	// drop the rest here.
	if err := hbasestore.Drop(ctx, c, s.Config().Namespace); err != nil {
		t.Fatal(err)
	}
}
