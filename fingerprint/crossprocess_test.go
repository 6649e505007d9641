package fingerprint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const childEnv = "SIMDEX_FP_CROSSPROCESS_CHILD"

// crossProcessResults fingerprints every test text and the generated corpus
// head, keyed by name.
func crossProcessResults(t *testing.T) map[string]Result {
	f := testFP(t)
	out := map[string]Result{}
	for _, td := range loadTexts(t) {
		out[td.name] = mustFP(t, f, td.doc)
	}
	for name, d := range goldenDocs(t) {
		out["golden/"+name] = mustFP(t, f, d)
	}
	return out
}

// TestCrossProcessChild is the child half of TestSameOutputAcrossProcesses;
// it does nothing unless started by it.
func TestCrossProcessChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("child of TestSameOutputAcrossProcesses")
	}
	b, err := json.Marshal(crossProcessResults(t))
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(append(append([]byte("RESULTS "), b...), '\n'))
}

// Another process (fresh hash seeds, map iteration orders, allocation
// addresses) must produce the same fingerprints.
func TestSameOutputAcrossProcesses(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		t.Skip("in the child")
	}
	want := crossProcessResults(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrossProcessChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var got map[string]Result
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULTS "); ok {
			if err := json.Unmarshal([]byte(rest), &got); err != nil {
				t.Fatalf("child output: %v", err)
			}
		}
	}
	if len(got) == 0 {
		t.Fatalf("child printed no results:\n%s", stdout.String())
	}
	// Round-trip ours through JSON too, so both sides compare alike.
	b, _ := json.Marshal(want)
	want = nil
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s: child %+v, parent %+v", k, got[k], want[k])
			}
		}
	}
}

// One Fingerprinter shared by several goroutines gives every goroutine the
// sequential answer (and -race sees no data race in it or in gse).
func TestConcurrentUse(t *testing.T) {
	f := testFP(t)
	texts := loadTexts(t)
	want := make([]Result, len(texts))
	for i, td := range texts {
		want[i] = mustFP(t, f, td.doc)
	}
	const workers = 4
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for k := range texts {
					i := (k + w + round) % len(texts)
					got, err := f.Fingerprint(texts[i].doc)
					if err != nil || !reflect.DeepEqual(got, want[i]) {
						errs <- fmt.Errorf("worker %d, %s: %+v, %v; want %+v", w, texts[i].name, got, err, want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
