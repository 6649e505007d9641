package loadgen

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/fingerprint"
)

// fpCeiling is the check-by-text ceiling on this machine right now: the
// same varied texts the check-text mode sends, fingerprinted in this
// process by GOMAXPROCS goroutines sharing one Fingerprinter (as the server
// does), with no HTTP, JSON or index work. Run it next to a check-text
// measurement: on a shared machine both see the same contention.
func fpCeiling(c config) error {
	b, err := os.ReadFile(c.textFile)
	if err != nil {
		return err
	}
	f, err := fingerprint.New(fingerprint.DefaultConfig())
	if err != nil {
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	var done atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	start := time.Now()
	deadline := start.Add(c.duration)
	self0 := selfCPU()
	for w := range workers {
		wg.Add(1)
		go func() { // joined by wg.Wait below; stops at the deadline
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				text := string(b) + " 编号" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + "。"
				if _, err := f.Fingerprint(fingerprint.Document{Body: text, Lang: "zh"}); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	el := time.Since(start)
	cpu := selfCPU() - self0
	fmt.Printf("mode=fp-ceiling workers=%d duration=%v docs=%d rate=%.0f docs/s cpu=%.2fs (%.1f µs/doc)\n",
		workers, el.Round(time.Millisecond), done.Load(), float64(done.Load())/el.Seconds(), cpu.Seconds(),
		float64(cpu.Microseconds())/float64(done.Load()))
	return nil
}
