package client_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/simdex/simdex/client"
)

func TestSeen(t *testing.T) {
	c, _ := newClient(t, "")
	_, err := c.InsertDocument(ctx(t), client.InsertRequest{DocumentInput: client.DocumentInput{ID: "seen/orig", Content: client.Content{Text: article}}})
	if err != nil {
		t.Fatal(err)
	}
	restyled := strings.ReplaceAll(article, ",", " -")
	if _, err := c.InsertDocument(ctx(t), client.InsertRequest{DocumentInput: client.DocumentInput{ID: "seen/restyled", Content: client.Content{Text: restyled}}}); err != nil {
		t.Fatal(err)
	}
	user := "reader-1"
	m, err := c.SeenMark(ctx(t), user, []client.SeenItem{
		{ID: "a17", DocID: "seen/orig"},
		{ID: "b2", Fingerprint: "0x00ff00ff00ff00ff"},
		{ID: "item/with/slashes"},
		{ID: "c9", DocID: "seen/missing"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.User != user || m.Marked != 4 || !reflect.DeepEqual(m.UnknownDocIDs, []string{"seen/missing"}) {
		t.Fatalf("mark: %+v", m)
	}
	su, err := c.SeenUser(ctx(t), user)
	if err != nil || su.User != user || su.Items != 4 || su.Bytes <= 0 || su.Retention == "" {
		t.Fatalf("user: %+v %v", su, err)
	}
	ck, err := c.SeenCheck(ctx(t), user, []string{"a17", "zz", "item/with/slashes"})
	if err != nil || !reflect.DeepEqual(ck.Seen, []bool{true, false, true}) {
		t.Fatalf("check: %+v %v", ck, err)
	}

	// The restyled copy of a seen document is dropped with near.
	cands := []client.SeenItem{{ID: "new1"}, {ID: "a17"}, {ID: "copy", DocID: "seen/restyled"}, {ID: "new2", DocID: "seen/none"}}
	full, err := c.SeenFilter(ctx(t), user, client.SeenFilterRequest{Candidates: cands, Near: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full.Kept, []string{"new1", "new2"}) || len(full.Dropped) != 2 ||
		full.Dropped[0] != (client.SeenDropped{Index: 1, ID: "a17", Reason: "seen"}) ||
		full.Dropped[1].Index != 2 || full.Dropped[1].Reason != "near" || full.Dropped[1].Distance == nil ||
		!reflect.DeepEqual(full.UnknownDocIDs, []string{"seen/none"}) {
		t.Fatalf("filter full: %+v", full)
	}
	kept, err := c.SeenFilter(ctx(t), user, client.SeenFilterRequest{Candidates: cands, Near: true, K: client.Ptr(3), Answer: client.AnswerKept})
	if err != nil || !reflect.DeepEqual(kept.Kept, []string{"new1", "new2"}) || kept.Dropped != nil {
		t.Fatalf("filter kept: %+v %v", kept, err)
	}
	idx, err := c.SeenFilter(ctx(t), user, client.SeenFilterRequest{IDs: []string{"x", "a17", "y"}, Answer: client.AnswerIndexes})
	if err != nil || !reflect.DeepEqual(idx.KeptIndexes, []int{0, 2}) || idx.Kept != nil {
		t.Fatalf("filter indexes: %+v %v", idx, err)
	}
	if err := c.SeenDelete(ctx(t), user, "item/with/slashes"); err != nil {
		t.Fatal(err)
	}
	if ck, err := c.SeenCheck(ctx(t), user, []string{"item/with/slashes", "a17"}); err != nil || !reflect.DeepEqual(ck.Seen, []bool{false, true}) {
		t.Fatalf("check after delete: %+v %v", ck, err)
	}
	if err := c.SeenForget(ctx(t), user); err != nil {
		t.Fatal(err)
	}
	if ck, err := c.SeenCheck(ctx(t), user, []string{"a17"}); err != nil || !reflect.DeepEqual(ck.Seen, []bool{false}) {
		t.Fatalf("check after forget: %+v %v", ck, err)
	}
	if su, err := c.SeenUser(ctx(t), user); err != nil || su.Items != 0 {
		t.Fatalf("user after forget: %+v %v", su, err)
	}

	// Errors: a bad user, a bad fingerprint, both candidates and ids.
	_, err = c.SeenCheck(ctx(t), strings.Repeat("u", 300), []string{"a"})
	if e := asError(t, err); e.Status != 400 || e.Kind != "bad-user" {
		t.Fatalf("long user: %+v", e)
	}
	_, err = c.SeenMark(ctx(t), user, []client.SeenItem{{ID: "x", Fingerprint: "nope"}})
	if e := asError(t, err); e.Status != 400 {
		t.Fatalf("bad fingerprint: %+v", e)
	}
	_, err = c.SeenFilter(ctx(t), user, client.SeenFilterRequest{Candidates: cands, IDs: []string{"a"}})
	if e := asError(t, err); e.Status != 400 || e.Kind != "invalid-field" {
		t.Fatalf("candidates and ids: %+v", e)
	}
	if _, err := c.SeenCheck(ctx(t), "a/b", []string{"a"}); err == nil {
		t.Fatal("a user id with '/' was sent")
	}
}

func TestSeenBatch(t *testing.T) {
	c, tr := newClient(t, "")
	res, err := c.SeenMarkBatch(ctx(t), []client.SeenUserMarks{
		{User: "batch-u1", Items: []client.SeenItem{{ID: "a"}, {ID: "b"}}},
		{User: "batch-u2", Items: []client.SeenItem{{ID: "c"}}},
	})
	if err != nil || len(res) != 2 || res[0].Marked != 2 || res[1].Marked != 1 || res[1].User != "batch-u2" {
		t.Fatalf("mark batch: %+v %v", res, err)
	}
	ck, err := c.SeenCheckBatch(ctx(t), []client.SeenUserIDs{{User: "batch-u1", IDs: []string{"a", "c"}}, {User: "batch-u2", IDs: []string{"a", "c"}}})
	if err != nil || !reflect.DeepEqual(ck[0].Seen, []bool{true, false}) || !reflect.DeepEqual(ck[1].Seen, []bool{false, true}) {
		t.Fatalf("check batch: %+v %v", ck, err)
	}
	fr, err := c.SeenFilterBatch(ctx(t), []client.SeenUserFilter{
		{User: "batch-u1", SeenFilterRequest: client.SeenFilterRequest{IDs: []string{"a", "b", "z"}}},
		{User: "batch-u2", SeenFilterRequest: client.SeenFilterRequest{IDs: []string{"a", "c"}, Answer: client.AnswerIndexes}},
	})
	if err != nil || !reflect.DeepEqual(fr[0].Kept, []string{"z"}) || len(fr[0].Dropped) != 2 || !reflect.DeepEqual(fr[1].KeptIndexes, []int{0}) {
		t.Fatalf("filter batch: %+v %v", fr, err)
	}
	for _, op := range []string{"seenMarkBatch", "seenCheckBatch", "seenFilterBatch"} {
		if tr.count(op) != 1 {
			t.Fatalf("%s: %d calls", op, tr.count(op))
		}
	}
}

// TestSeenChunking: a user's 2,500 marks, ids or candidates are three
// calls each, and the answers join as one call's would.
func TestSeenChunking(t *testing.T) {
	c, tr := newClient(t, "")
	const n = 2500
	user := "chunk-reader"
	items := make([]client.SeenItem, 0, n/2)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("item-%d", i)
		if i%2 == 0 {
			items = append(items, client.SeenItem{ID: ids[i]})
		}
	}
	// 1,250 marks: two calls.
	m, err := c.SeenMark(ctx(t), user, items)
	if err != nil || m.Marked != len(items) || tr.count("seenMark") != 2 {
		t.Fatalf("mark: %+v %v, %d calls", m, err, tr.count("seenMark"))
	}
	ck, err := c.SeenCheck(ctx(t), user, ids)
	if err != nil || len(ck.Seen) != n || tr.count("seenCheck") != 3 {
		t.Fatalf("check: %d flags %v, %d calls", len(ck.Seen), err, tr.count("seenCheck"))
	}
	for i, s := range ck.Seen {
		if s != (i%2 == 0) {
			t.Fatalf("flag %d: %v", i, s)
		}
	}
	full, err := c.SeenFilter(ctx(t), user, client.SeenFilterRequest{IDs: ids})
	if err != nil || len(full.Kept) != n/2 || len(full.Dropped) != n/2 || tr.count("seenFilter") != 3 {
		t.Fatalf("filter: %d kept, %d dropped, %v, %d calls", len(full.Kept), len(full.Dropped), err, tr.count("seenFilter"))
	}
	for i, d := range full.Dropped {
		if d.Index != 2*i || d.ID != ids[2*i] {
			t.Fatalf("dropped %d: %+v", i, d)
		}
	}
	idx, err := c.SeenFilter(ctx(t), user, client.SeenFilterRequest{IDs: ids, Answer: client.AnswerIndexes})
	if err != nil || len(idx.KeptIndexes) != n/2 {
		t.Fatalf("filter indexes: %d %v", len(idx.KeptIndexes), err)
	}
	for i, k := range idx.KeptIndexes {
		if k != 2*i+1 {
			t.Fatalf("kept index %d: %d", i, k)
		}
	}
	// Batch form: 1,500 users of one id each are two calls (1,000 users a
	// call), one user of 2,500 ids after them three more.
	users := make([]client.SeenUserIDs, 1500)
	for i := range users {
		users[i] = client.SeenUserIDs{User: fmt.Sprintf("u%d", i), IDs: []string{"x"}}
	}
	users = append(users, client.SeenUserIDs{User: user, IDs: ids})
	before := tr.count("seenCheckBatch")
	res, err := c.SeenCheckBatch(ctx(t), users)
	if err != nil || len(res) != 1501 || !reflect.DeepEqual(res[1500].Seen, ck.Seen) || res[1499].User != "u1499" {
		t.Fatalf("check batch: %d results %v", len(res), err)
	}
	if got := tr.count("seenCheckBatch") - before; got != 4 {
		// 1,000 users; 500 users + the first 1,000 ids of the last; two
		// more pieces of the last user, one a call.
		t.Fatalf("%d batch calls", got)
	}
}
