package sparkjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage/hbasestore"
)

// secondLoad writes the inputs of a load into the index the first file of
// ins made: the second file's documents under new ids; copies of stored
// documents under new ids (the same fingerprints, index entries and time
// buckets as stored ones; the deleted document among them, whose
// tombstones the copy's entries clear), some repeated with another text
// (the later record wins); and the fingerprint lines. It returns them and
// a file of stored ids.
func secondLoad(t *testing.T, dir string, ins []input, deleted string) (second []input, stored input) {
	t.Helper()
	read := func(path string) []map[string]any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for _, l := range strings.Split(string(b), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil {
				if id, ok := m["id"].(string); ok && strings.HasPrefix(id, "doc-") {
					out = append(out, m)
				}
			}
		}
		return out
	}
	write := func(name string, docs []map[string]any) input {
		var b strings.Builder
		for _, d := range docs {
			l, _ := json.Marshal(d)
			fmt.Fprintln(&b, string(l))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return input{path, bulkload.FormatDocs}
	}
	first, other := read(ins[0].path), read(ins[1].path)
	for _, d := range other {
		d["id"] = strings.Replace(d["id"].(string), "doc-", "new-", 1)
	}
	var copies []map[string]any
	for i, d := range first {
		if i%3 != 0 && d["id"] != deleted {
			continue
		}
		c := map[string]any{}
		for k, v := range d {
			c[k] = v
		}
		c["id"] = fmt.Sprintf("copy-%04d", i)
		copies = append(copies, c)
		if i%9 == 0 && i+40 < len(first) { // repeated: the later text wins
			r := map[string]any{"id": c["id"], "text": first[i+40]["text"], "time": first[i+40]["time"]}
			copies = append(copies, r)
		}
	}
	// Stored ids again: every other one with another document's text (a
	// new fingerprint: the old one's cells go, and its index entries get
	// tombstones where no other document carries it), the others as they
	// are, a few twice.
	var again []map[string]any
	for i, d := range first[20:80] {
		r := map[string]any{}
		for k, v := range d {
			r[k] = v
		}
		if i%2 == 0 {
			r["text"] = first[(i*7+3)%len(first)]["text"]
		}
		again = append(again, r)
		if i%11 == 3 {
			again = append(again, map[string]any{"id": r["id"], "text": first[i]["text"], "time": r["time"]})
		}
	}
	return []input{write("new.jsonl", other), write("copies.jsonl", copies), ins[2]}, write("stored.jsonl", again)
}

// testMerge loads the first input of writeInputs into two stores with
// cmd/bulkload's code and deletes a document in each, then loads a second
// input (secondLoad) into one with cmd/bulkload's code and into the other
// with the job's steps: the two must be equal cell for cell, and so after a
// third load that replaces stored documents.
func testMerge(t *testing.T, dir string, ref, job Store, name func(Store) string, hc hbasestore.Config, beforeImport func(ctx context.Context, c *hbase.Client, table string, files []bulkload.HFile) error) {
	ins := writeInputs(t, dir)
	const deleted = "doc-0010"
	for i, s := range []Store{ref, job} {
		bulkLoad(t, s, filepath.Join(dir, fmt.Sprint("first.cp", i)), ins[:1])
		ix, err := openIndex(bg, s, testIndex)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(ix.Delete(bg, deleted), ix.Close()); err != nil {
			t.Fatal(err)
		}
	}
	second, stored := secondLoad(t, dir, ins, deleted)
	sum := bulkLoad(t, ref, filepath.Join(dir, "second.cp"), second)
	if sum.DuplicateIDs == 0 {
		t.Fatalf("the second input should repeat ids: %v", sum)
	}
	res := runJob(t, job, filepath.Join(dir, "second.work"), second, 2, beforeImport)
	if res.ingestErr != nil {
		t.Fatal(res.ingestErr)
	}
	if res.ingest.MergedBytes == 0 || res.ingest.Counted.Fingerprints >= res.counts.Fingerprints || res.ingest.Counted.Documents != sum.Documents {
		t.Errorf("merge: %+v (the load's distinct fingerprints %d; cmd/bulkload: %v)", res.ingest, res.counts.Fingerprints, sum)
	}
	equal := func(when string) {
		t.Helper()
		diffs, err := CompareStores(bg, hc, name(ref), name(job), 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) > 0 {
			t.Fatalf("%s: the job's index differs from the load's:\n%s", when, strings.Join(diffs, "\n"))
		}
	}
	equal("after the second load")
	bulkLoad(t, ref, filepath.Join(dir, "third.cp"), []input{stored})
	res = runJob(t, job, filepath.Join(dir, "stored.work"), []input{stored}, -1, nil)
	if res.ingestErr != nil {
		t.Fatal(res.ingestErr)
	}
	if res.ingest.Counted.Documents != 0 {
		t.Errorf("a load of stored ids counted %d new documents", res.ingest.Counted.Documents)
	}
	equal("after the load that replaces stored documents")
}

// TestJobMergesLikeBulkLoad: into a non-empty embedded index.
func TestJobMergesLikeBulkLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	dir := t.TempDir()
	ref, job := Store{DataDir: filepath.Join(dir, "ref")}, Store{DataDir: filepath.Join(dir, "job")}
	testMerge(t, dir, ref, job, func(s Store) string { return s.DataDir }, hbasestore.Config{}, nil)
}

// TestJobMergesLikeBulkLoadHBase: into a non-empty index in HBase, with
// regions that split before the import.
func TestJobMergesLikeBulkLoadHBase(t *testing.T) {
	zk := hbasetest.ZK(t)
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	ref, job := hbaseStore(t, zk, nil), hbaseStore(t, zk, nil)
	testMerge(t, t.TempDir(), ref, job, func(s Store) string { return "hbase:" + s.HBase.Namespace }, hbasestore.Config{ZooKeeper: []string{zk}}, SplitFirstFile)
}
