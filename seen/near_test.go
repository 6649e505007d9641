package seen

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestNearIndexAgreesWithScan: the block index answers exactly what the
// linear scan answers, for every k, on random and planted near pairs.
func TestNearIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fps := make([]uint64, 2000)
	for i := range fps {
		fps[i] = rng.Uint64()
	}
	v := view{fps: fps}
	for k := 0; k <= 10; k++ {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			ix := newNearIndex(fps, k)
			if (ix == nil) != (k == 0 || 64/(k+1) < minNearBlockBits) {
				t.Fatalf("index built: %v", ix != nil)
			}
			if ix == nil {
				return
			}
			for q := range 3000 {
				fp := rng.Uint64()
				if q%2 == 0 { // plant a neighbour at distance 0..k+1
					fp = fps[rng.IntN(len(fps))]
					for range rng.IntN(k + 2) {
						fp ^= 1 << rng.IntN(64)
					}
				}
				if got, want := ix.nearest(fp, k), v.nearest(fp, k); got != want {
					t.Fatalf("query %016x: index %d, scan %d", fp, got, want)
				}
			}
		})
	}
}
