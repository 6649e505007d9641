package bulkload

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestIndexFirstSameContent: holding the fp and docs cells in document runs
// and writing them after the index, with several batches in flight and
// small batches, gives exactly the cells of the default write path, and
// the same summary.
func TestIndexFirstSameContent(t *testing.T) {
	dir := t.TempDir()
	docs := genFPs(11, 3000)
	docs = append(docs, genDoc{id: docs[5].id, fp: docs[7].fp, at: docs[9].at}) // a repeated id: the last wins
	glob, _ := inputs(t, dir, docs)
	ref := openIndex(t, filepath.Join(dir, "ref"))
	want, err := Run(bg, ref, withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-ref")))
	if err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, filepath.Join(dir, "ix"))
	cfg := withCP(baseConfig(dir, glob), filepath.Join(dir, "cp-ix"))
	cfg.IndexFirst, cfg.InFlight, cfg.ApplyBytes = true, 4, 8<<10
	got, err := Run(bg, ix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(dump(t, ref), dump(t, ix)); d != "" {
		t.Errorf("IndexFirst load differs:\n%s", d)
	}
	got.Duration, want.Duration = 0, 0
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if got.Runs < 3 {
		t.Errorf("%d runs: the test wants several document runs", got.Runs)
	}
}

// TestResumeRefusesOtherWritePath: a checkpoint written with the fp and
// docs cells in document runs cannot be resumed by a load that expects them
// in the store, and the other way round.
func TestResumeRefusesOtherWritePath(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.csv", []byte("x,0123456789abcdef,1\n"))
	ix := openIndex(t, filepath.Join(dir, "ix"))
	for _, first := range []bool{true, false} {
		cfg := Config{Inputs: []string{a}, CheckpointDir: filepath.Join(dir, fmt.Sprint("cp", first)), IndexFirst: first}
		if _, err := Run(bg, ix, cfg); err != nil {
			t.Fatal(err)
		}
		cfg.IndexFirst = !first
		if _, err := Run(bg, ix, cfg); !errors.Is(err, ErrInputChanged) {
			t.Errorf("index first %v, resumed with %v: err %v, want ErrInputChanged", first, !first, err)
		}
	}
}
