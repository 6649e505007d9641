package server

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/simdex/simdex/internal/hbasetest"
)

// TestHBaseTwoServersBandNearCopiesOneOriginal: two servers on one HBase
// race insert-if-unique of two near-copies that are beyond the simhash
// distance K but share an LSH band (found only through the band rows);
// exactly one is stored every round, and the other names it.
func TestHBaseTwoServersBandNearCopiesOneOriginal(t *testing.T) {
	zk := hbasetest.ZK(t)
	raw, err := os.ReadFile("../../fingerprint/testdata/texts/en_desal.txt")
	if err != nil {
		t.Fatal(err)
	}
	texts := [2]string{string(raw), ""}
	texts[1], _ = bandNearCopy(t, sharedFingerprinter(t), texts[0], DefaultConfig().Layout.K)
	ns := hbaseNamespace(t, zk)
	a := startHBaseServer(t, zk, ns, true)
	b := startHBaseServer(t, zk, ns, false)
	for round := range 8 {
		ins := insertOnBoth(t, a, b, round, texts)
		if t.Failed() {
			return
		}
		stored := []bool{ins[0].Stored, ins[1].Stored}
		dupOf := []string{ins[0].DuplicateOf, ins[1].DuplicateOf}
		if stored[0] == stored[1] {
			t.Fatalf("round %d: stored %v; want exactly one", round, stored)
		}
		winner, loser := 0, 1
		if stored[1] {
			winner, loser = 1, 0
		}
		if want := fmt.Sprintf("r%d-%d", round, winner); dupOf[loser] != want {
			t.Fatalf("round %d: the refused copy names %q, want %q", round, dupOf[loser], want)
		}
		if st, out := a.do(t, "DELETE", fmt.Sprintf("/v1/documents/r%d-%d", round, winner), nil); st != http.StatusNoContent {
			t.Fatalf("delete: %d %s", st, out)
		}
	}
}
