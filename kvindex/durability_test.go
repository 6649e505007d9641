package kvindex_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/storage/pebblestore"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("SIMDEX_KV_CHILD"); dir != "" {
		os.Exit(childInsertLoop(dir))
	}
	os.Exit(m.Run())
}

// childInsertLoop inserts documents until killed, printing "ack id fp" after
// each insert returns.
func childInsertLoop(dir string) int {
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ix, err := kvindex.Open(bg, st, kvindex.Config{RecipeVersion: testRecipe})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		d := doc(fmt.Sprintf("doc-%d", i), fingerprint.Fingerprint(r.Uint64()), t0.Add(time.Duration(i)*time.Second))
		batch := []kvindex.Document{d}
		if i%3 == 0 { // some batches too
			batch = append(batch, doc(fmt.Sprintf("doc-%d-b", i), fingerprint.Fingerprint(r.Uint64()), t0))
		}
		if _, _, err := ix.InsertBatch(bg, batch, kvindex.InsertAlways, 3); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, d := range batch {
			fmt.Fprintf(out, "ack %s %d\n", d.ID, uint64(d.Fingerprint))
		}
		out.Flush()
	}
}

// A process inserting in a loop is killed with SIGKILL; after reopening,
// every insert it acknowledged is there and findable.
func TestAcknowledgedInsertsSurviveSIGKILL(t *testing.T) {
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SIMDEX_KV_CHILD="+dir)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		acked := map[string]fingerprint.Fingerprint{}
		// Kill at a different point each round, mid-stream.
		killAt := 50 + round*70
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			var fp uint64
			if len(f) != 3 || f[0] != "ack" {
				t.Fatalf("child said %q", sc.Text())
			}
			fmt.Sscan(f[2], &fp)
			acked[f[1]] = fingerprint.Fingerprint(fp)
			if len(acked) >= killAt {
				break
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Acks already written to the pipe before the kill count too.
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 {
				var fp uint64
				fmt.Sscan(f[2], &fp)
				acked[f[1]] = fingerprint.Fingerprint(fp)
			}
		}
		cmd.Wait()
		if len(acked) < killAt {
			t.Fatalf("child acknowledged only %d inserts", len(acked))
		}
		ix := openAt(t, dir, kvindex.Config{}, false)
		for id, fp := range acked {
			if _, err := ix.Get(bg, id); err != nil {
				t.Fatalf("round %d: acknowledged %s lost: %v", round, id, err)
			}
			res, err := ix.Lookup(bg, fp, kvindex.LookupOptions{K: 0})
			if err != nil || !slices.Contains(ids(res.Hits), id) {
				t.Fatalf("round %d: acknowledged %s not found by fingerprint: %v %v", round, id, ids(res.Hits), err)
			}
		}
		st, _ := ix.Stats(bg)
		if st.Documents < int64(len(acked)) {
			t.Fatalf("documents counter %d < %d acknowledged", st.Documents, len(acked))
		}
		ix.Close()
	}
}
