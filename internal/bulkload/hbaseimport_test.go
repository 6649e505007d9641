package bulkload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/hbase/hfile"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

// The HFile import path on real HBase (hbaseimport.go); its plain case is
// in TestHBaseLoadEqualsEmbedded.

func TestImportConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c  ImportConfig
		ok bool
	}{
		{ImportConfig{}, true},
		{ImportConfig{Mode: ImportAuto}, true},
		{ImportConfig{Mode: "bulk"}, false},
		{ImportConfig{Mode: ImportHFile, FileBytes: 1000}, false},
	} {
		if err := tc.c.validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.c, err)
		}
	}
	c := baseConfig("/x", "/x/*")
	c.Import.Mode = "bulk"
	if err := c.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("Config.Validate with a bad import mode: %v", err)
	}
}

// TestHBaseHFileImportSplitsAndFallback: regions that split between the
// cutting of the files and their import (the files are cut again), and
// region servers that cannot read the files (hfile mode fails with
// hbase.ErrBulkLoadUnreadable; auto mode, rerun on the same checkpoint,
// puts them instead), each give exactly the embedded store's index.
func TestHBaseHFileImportSplitsAndFallback(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel()
	dir := t.TempDir()
	docs := genFPs(23, 4000)
	glob, _ := inputs(t, dir, docs)
	ref := openIndex(t, filepath.Join(dir, "pebble"))
	if _, err := Run(bg, ref, withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-pebble"))); err != nil {
		t.Fatal(err)
	}
	want := dump(t, ref)

	t.Run("split before import", func(t *testing.T) {
		t.Parallel()
		ix, ns := openHBaseIndex(t, zk)
		c := ix.Store().(*hbasestore.Store).Client()
		cfg := withCP(hfileConfig(dir, glob), filepath.Join(dir, "cp-split"))
		var splitErrs []error
		blockSizes := map[string]float64{}
		cfg.beforeImport = func(kind string, files []string) {
			if kind == "t01" || kind == "doccells" {
				blockSizes[kind] = meanBlockBytes(t, files)
			}
		}
		cfg.beforeCommit = func(kind string) {
			// The files of table 1's index rows and of the docs cells are
			// cut (one region each); split those regions before the import.
			var table storage.Table
			var at []byte
			switch kind {
			case "t01":
				table, at = storage.TableIndex, []byte{1, 0x81, 0x23}
			case "doccells":
				table, at = storage.TableDocs, []byte("doc-002000")
			default:
				return
			}
			ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
			defer cancel()
			splitErrs = append(splitErrs, c.SplitRegion(ctx, hbasestore.TableName(ns, table), at))
		}
		sum, err := Run(bg, ix, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(splitErrs...); err != nil || len(splitErrs) != 2 {
			t.Fatalf("splits: %d, %v", len(splitErrs), err)
		}
		for _, table := range []storage.Table{storage.TableIndex, storage.TableDocs} {
			rs, err := c.Regions(bg, hbasestore.TableName(ns, table))
			if err != nil || len(rs) != 2 {
				t.Fatalf("%s: %d regions after the split (%v)", table, len(rs), err)
			}
		}
		if d := diff(want, dump(t, ix)); d != "" {
			t.Errorf("load with splits before the imports differs from the embedded one:\n%s", d)
		}
		// The index family declares 4 KiB blocks (schema.IndexBlockSize)
		// and the imported files keep them; the docs table's family keeps
		// HBase's 64 KiB default.
		if b := blockSizes["t01"]; b == 0 || b > 2*schema.IndexBlockSize {
			t.Errorf("index table files: %.0f bytes per data block, want ~%d (the family's BLOCKSIZE)", b, schema.IndexBlockSize)
		}
		if b := blockSizes["doccells"]; b <= 2*schema.IndexBlockSize {
			t.Errorf("docs table files: %.0f bytes per data block, want the 64 KiB default", b)
		}
		// Six tables' files, two of them cut again into two each.
		if sum.HFilesImported < 8 || sum.HFilesPut != 0 {
			t.Errorf("%d HFiles imported, %d put: want the re-cut files imported too", sum.HFilesImported, sum.HFilesPut)
		}
		t.Logf("%s", sum)
	})

	t.Run("unreadable files", func(t *testing.T) {
		t.Parallel()
		ix, _ := openHBaseIndex(t, zk)
		cfg := withCP(hfileConfig(dir, glob), filepath.Join(dir, "cp-unreadable"))
		// The region server looks for the files where they are not.
		cfg.Import.RemoteDir = filepath.Join(dir, "not-the-hfile-dir")
		_, err := Run(bg, ix, cfg)
		if !errors.Is(err, hbase.ErrBulkLoadUnreadable) {
			t.Fatalf("hfile mode with files the server cannot read: %v", err)
		}
		cfg.Import.Mode = ImportAuto
		sum, err := Run(bg, ix, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sum.HFilesPut == 0 || sum.HFilesImported != 0 {
			t.Errorf("auto mode: %d HFiles imported, %d put: want all put", sum.HFilesImported, sum.HFilesPut)
		}
		if d := diff(want, dump(t, ix)); d != "" {
			t.Errorf("auto mode's fallback to puts differs from the embedded load:\n%s", d)
		}
	})
}

// TestHBaseHFileResumeAfterSIGKILL: an HFile-path load killed (SIGKILL)
// between its imports (after the index tables' imports, before the fp
// table's; after the fp table's, before the docs table's), then rerun,
// gives exactly the content of an uninterrupted load: importing the same
// cells again is idempotent.
func TestHBaseHFileResumeAfterSIGKILL(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	docs := genFPs(24, 6000)
	glob, _ := inputs(t, root, docs)
	ref := openIndex(t, filepath.Join(root, "ref"))
	if _, err := Run(bg, ref, withCP(baseConfig(root, glob), filepath.Join(root, "ref-cp"))); err != nil {
		t.Fatal(err)
	}
	want := dump(t, ref)
	for i, kind := range []string{"fpcells", "doccells"} {
		dir := filepath.Join(root, fmt.Sprint(i))
		os.MkdirAll(dir, 0o755)
		ix, ns := openHBaseIndex(t, zk)
		cmd := startChild(t, strings.Join([]string{zk, ns, dir, glob, "0", "1", "0s", "hfile:" + kind}, "|"))
		deadline := time.Now().Add(3 * time.Minute)
		for {
			if _, err := os.Stat(filepath.Join(dir, "killpoint")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("kill point %s: the child never reached it", kind)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
			t.Fatalf("kill point %s: the child was not killed: %v", kind, err)
		}
		count := func(table storage.Table) int {
			n := 0
			if err := ix.Store().Scan(bg, table, nil, nil, func(r storage.Row) error { n += len(r.Cells); return nil }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		indexCells, fpCells, docCells := count(storage.TableIndex), count(storage.TableFP), count(storage.TableDocs)
		t.Logf("killed before the %s import: index cells %d, fp cells %d, docs cells %d in HBase", kind, indexCells, fpCells, docCells)
		if indexCells == 0 || docCells != 0 || (kind == "doccells") != (fpCells > 0) {
			t.Fatalf("kill point %s: not between imports as planned", kind)
		}
		sum, err := Run(bg, ix, hfileConfig(dir, glob))
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(dump(t, ix), want); d != "" {
			t.Errorf("kill point %s: resumed HFile load differs from an uninterrupted one:\n%s", kind, d)
		}
		if !sum.Resumed || sum.HFilesImported == 0 {
			t.Errorf("kill point %s: resumed %v, %d HFiles imported", kind, sum.Resumed, sum.HFilesImported)
		}
	}
}

// TestHBaseHFileRepeatedIDs: a fresh HFile load, then an HFile load into
// the non-empty index that repeats stored ids (index rows merged under the
// row lock, fp and docs cells imported over stored ones, superseded cells
// deleted), give exactly the embedded store's index after the same two
// loads.
func TestHBaseHFileRepeatedIDs(t *testing.T) {
	zk := hbasetest.ZK(t)
	t.Parallel()
	dir := t.TempDir()
	a, b := repeatedIDs()
	pa := writeFile(t, dir, "a.csv", []byte(fpLines(a)))
	pb := writeFile(t, dir, "b.csv", []byte(fpLines(b)))
	ref := openIndex(t, filepath.Join(dir, "ref"))
	ix, _ := openHBaseIndex(t, zk)
	for n, target := range []*kvindex.Index{ref, ix} {
		for i, in := range []string{pa, pb} {
			cfg := baseConfig(dir, in)
			if n == 1 {
				cfg = hfileConfig(dir, in)
			}
			cfg.CheckpointDir = filepath.Join(dir, fmt.Sprint("cp", n, i))
			sum, err := Run(bg, target, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n == 1 && sum.HFilesImported == 0 {
				t.Errorf("load %d into HBase imported no HFiles", i)
			}
		}
	}
	if d := diff(dump(t, ref), dump(t, ix)); d != "" {
		t.Errorf("HFile loads with repeated ids differ from the embedded store's:\n%s", d)
	}
}

// meanBlockBytes reads the HFiles and returns the mean bytes of cell data
// per data block (0: no blocks).
func meanBlockBytes(t *testing.T, files []string) float64 {
	t.Helper()
	var bytes, blocks int
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := hfile.Read(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range f.Cells {
			bytes += len(c.Row) + len(c.Family) + len(c.Qualifier) + len(c.Value) + 20
		}
		blocks += f.Blocks
	}
	if blocks == 0 {
		return 0
	}
	return float64(bytes) / float64(blocks)
}
