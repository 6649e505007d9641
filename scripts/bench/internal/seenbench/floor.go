package seenbench

import (
	"bytes"
	"encoding/json"
	"log"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// The floor: what HTTP/1.1 through net/http costs on this machine before
// simdex does anything. The child (-serve-floor) reads each request body
// whole into a pooled buffer and answers a fixed body of the size of the
// "indexes" answer (no gin, no middleware, no parsing, no filter); the
// client sends the same request bytes as the indexes form and reads each
// answer whole, on one keep-alive connection, as measureREST does. Why:
// REST's latency against Redis' is bounded below by this, which no change
// to the filter can remove.

// floorAnswer is a fixed answer shaped like an "indexes" answer of ~280
// kept positions.
var floorAnswer = func() []byte {
	idx := make([]int, 280)
	for i := range idx {
		idx[i] = 2*i + 1
	}
	b, _ := json.Marshal(map[string]any{"user": "user12345", "kept_indexes": idx})
	return append(b, '\n')
}()

var floorBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// floorHandler is the -serve-floor child's handler.
func floorHandler(w http.ResponseWriter, r *http.Request) {
	buf := floorBufs.Get().(*bytes.Buffer)
	defer floorBufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(floorAnswer))}
	_, _ = w.Write(floorAnswer)
}

// measureFloor runs a warm-up and a measured pass against the floor child.
func measureFloor(child *exec.Cmd, addr string, qs []query) filterRun {
	conn, err := dialHTTP(addr)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.c.Close()
	reqs := restRequests(addr, "filter", "indexes", qs)
	var dst []byte
	var run filterRun
	for range 2 {
		run = filterRun{}
		settle()
		cpu0, srv0 := processCPU(), childCPU(child.Process.Pid)
		for i := range qs {
			t := time.Now()
			dst, err = conn.roundTrip(reqs[i], dst[:0])
			el := time.Since(t)
			if err != nil {
				log.Fatal(err)
			}
			if !bytes.Equal(dst, floorAnswer) {
				log.Fatalf("floor: unexpected answer %q", dst)
			}
			run.lat = append(run.lat, el)
		}
		run.clientCPU, run.serverCPU = processCPU()-cpu0, childCPU(child.Process.Pid)-srv0
	}
	return run
}
