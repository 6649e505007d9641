package sparkjob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/bulkload"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

var hbNS atomic.Int64

// hbaseStore makes a namespace of its own with the simdex tables in the
// suite's HBase (dropped at the end) and splits its tables at splits.
func hbaseStore(t *testing.T, zk string, splits map[storage.Table][][]byte) Store {
	t.Helper()
	ns := fmt.Sprintf("sj%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, hbNS.Add(1))
	cfg := hbasestore.Config{ZooKeeper: []string{zk}, Namespace: ns}
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	create := cfg
	create.CreateTables = true
	st, err := hbasestore.Open(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		if err := hbasestore.Drop(ctx, st.Client(), ns); err != nil {
			t.Logf("drop %s: %v", ns, err)
		}
		st.Close()
	})
	for table, keys := range splits {
		for _, k := range keys {
			if err := st.Client().SplitRegion(ctx, hbasestore.TableName(ns, table), k); err != nil {
				t.Fatalf("split %s at %x: %v", table, k, err)
			}
		}
	}
	return Store{HBase: &cfg}
}

// TestJobEqualsBulkLoadHBase: into HBase, the job's steps (parts cut at
// the tables' regions, HFiles written by the write tasks, imported by the
// driver) build the index that cmd/bulkload's HFile import builds from the
// same inputs, cell for cell, the index and band cells' timestamps
// included, the files with the permission asked for; a write that fails
// and is run again, and regions that split
// between prepare and ingest (the import cuts the files again), change
// nothing.
func TestJobEqualsBulkLoadHBase(t *testing.T) {
	zk := hbasetest.ZK(t)
	if testing.Short() {
		t.Skip("loads the dictionaries")
	}
	dir := t.TempDir()
	ins := writeInputs(t, dir)
	bulk := hbaseStore(t, zk, nil)
	sum := bulkLoad(t, bulk, filepath.Join(dir, "bulk.cp"), ins)
	if sum.HFilesImported == 0 || sum.HFilesPut != 0 {
		t.Fatalf("cmd/bulkload's load did not import HFiles: %v", sum)
	}
	splits := map[storage.Table][][]byte{
		storage.TableIndex: {kvindex.IndexRowKey(nil, 1, 0x80, 8), {2}},
		storage.TableFP:    {kvindex.FPRowKey(0x3000_0000_0000_0000)},
		storage.TableDocs:  {[]byte("doc-0100")},
		storage.TableBands: {kvindex.BandRowKey(20, 1<<63)},
	}
	job := hbaseStore(t, zk, splits)
	job.HFileMode = 0o660 // as cmd/bulkload --hbase-hfile-mode 0660
	var splitTables []string
	split := func(ctx context.Context, c *hbase.Client, table string, files []bulkload.HFile) error {
		for _, f := range files {
			fi, err := os.Stat(f.Path)
			if err != nil {
				return err
			}
			if fi.Mode().Perm() != job.HFileMode {
				return fmt.Errorf("%s: mode %v, want %v", f.Path, fi.Mode(), job.HFileMode)
			}
		}
		if strings.HasSuffix(table, ":index") || strings.HasSuffix(table, ":docs") {
			splitTables = append(splitTables, table)
			return SplitFirstFile(ctx, c, table, files)
		}
		return nil
	}
	res := runJob(t, job, filepath.Join(dir, "job.work"), ins, 1, split)
	if res.ingestErr != nil {
		t.Fatal(res.ingestErr)
	}
	if res.records != sum.Records || res.rejects != sum.Rejected || res.counts.Documents != sum.Documents || res.counts.Fingerprints != sum.Fingerprints {
		t.Errorf("job counted %+v, the load %v", res, sum)
	}
	if len(splitTables) != 2 || res.ingest.HFilesImported <= int64(res.ingest.Files) {
		t.Errorf("split %v before the imports; imported %d pieces of %d files, want more pieces than files", splitTables, res.ingest.HFilesImported, res.ingest.Files)
	}
	diffs, err := CompareStores(bg, hbasestore.Config{ZooKeeper: []string{zk}}, "hbase:"+bulk.HBase.Namespace, "hbase:"+job.HBase.Namespace, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("the job's index differs from the load's:\n%s", strings.Join(diffs, "\n"))
	}
	perTable, err := cellCounts(bg, hbasestore.Config{ZooKeeper: []string{zk}}, "hbase:"+bulk.HBase.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compared cells: %v; %d parts, %d files, %d imported", perTable, res.ingest.Parts, res.ingest.Files, res.ingest.HFilesImported)
	for _, tb := range []storage.Table{storage.TableIndex, storage.TableFP, storage.TableDocs, storage.TableBands} {
		if perTable[tb] == 0 {
			t.Fatalf("no %s cells compared", tb)
		}
	}
	// The job run again finds the load's marker and does nothing.
	if done, err := Prepare(bg, job, testIndex, "load-job.work", filepath.Join(dir, "again.json")); err != nil || !done {
		t.Fatalf("prepare after the load: %v %v", done, err)
	}
}
