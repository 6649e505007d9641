package chaos

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"strings"
	"testing"
	"time"
)

// eventFuncs are the events by name: each disturbs the cluster under the
// traffic TestChaos runs and returns when its operations are done.
var eventFuncs = map[string]func(t *testing.T, r *run, logf func(string, ...any)){
	"rs-kill":         rsKill,
	"move":            moveRegions,
	"split-merge":     splitMerge,
	"rolling-restart": rollingRestart,
	"master-kill":     masterKill,
}

// rsKill kills the region server holding the most index regions with
// SIGKILL; the master reassigns its regions once its ZooKeeper session
// expires and its WAL is split. Then it starts again and the balancer
// gives it regions back.
func rsKill(t *testing.T, r *run, logf func(string, ...any)) {
	victim := r.indexHolder(t)
	role := r.c.role(victim)
	logf("kill -9 %s (%s)", role, victim)
	r.c.run(t, "kill", role)
	for _, tb := range []string{"index", "docs", "fp"} {
		r.c.waitAssigned(t, r.table(tb), victim, 3*time.Minute)
	}
	logf("%s's regions reassigned; starting it again", role)
	r.c.run(t, "start-role", role)
	r.c.waitServers(t, 3, true, 3*time.Minute)
	r.c.must(t, "balance")
}

// moveRegions moves every index and docs region by hand to another server,
// twice, then runs the balancer.
func moveRegions(t *testing.T, r *run, logf func(string, ...any)) {
	for round := range 2 {
		servers := r.liveServers(t)
		n := 0
		for _, tb := range []string{"index", "docs"} {
			for _, l := range r.c.regions(t, r.table(tb)) {
				to := r.otherServer(servers, l.server)
				r.c.must(t, "move %s %s", l.encoded, to)
				n++
			}
		}
		logf("move round %d: %d regions moved", round+1, n)
	}
	r.c.must(t, "balance")
	for _, tb := range []string{"index", "docs"} {
		r.c.waitAssigned(t, r.table(tb), "", 3*time.Minute)
	}
}

// splitMerge is the recipe that left asynchbase stuck, scaled to one
// machine: the 16 index regions split to 32, merged down to 4, split back
// to 16 and shuffled across the servers; the docs table split in four and
// merged back into one.
func splitMerge(t *testing.T, r *run, logf func(string, ...any)) {
	index := r.table("index")
	r.splitAll(t, index)
	logf("index split to %d regions", len(r.c.regions(t, index)))
	for len(r.c.regions(t, index)) > 4 {
		r.mergePairs(t, index)
	}
	logf("index merged to %d regions", len(r.c.regions(t, index)))
	for len(r.c.regions(t, index)) < 16 {
		r.splitAll(t, index)
	}
	logf("index split back to %d regions", len(r.c.regions(t, index)))
	r.shuffle(t, index)
	logf("index regions shuffled")

	docs := r.table("docs")
	for _, key := range []string{"m", "r", "s"} {
		r.splitAt(t, docs, []byte(key))
	}
	logf("docs split to %d regions", len(r.c.regions(t, docs)))
	r.shuffle(t, docs)
	for len(r.c.regions(t, docs)) > 1 {
		r.mergePairs(t, docs)
	}
	logf("docs merged back to %d region", len(r.c.regions(t, docs)))
	r.c.must(t, "balance")
}

// rollingRestart restarts the three region servers one after the other,
// each first unloaded (its regions moved to the others), then stopped with
// SIGTERM and started again.
func rollingRestart(t *testing.T, r *run, logf func(string, ...any)) {
	for _, role := range []string{"rs1", "rs2", "rs3"} {
		st := r.c.waitServers(t, 3, false, 3*time.Minute)
		name := ""
		for s := range st.servers {
			if r.c.role(s) == role {
				name = s
			}
		}
		if name == "" {
			t.Fatalf("%s is not among the live servers %v", role, st.servers)
		}
		r.c.must(t, "unload %s", name)
		r.c.run(t, "term", role)
		logf("%s unloaded and stopped; starting it again", role)
		r.c.run(t, "start-role", role)
	}
	r.c.waitServers(t, 3, true, 3*time.Minute)
	r.c.must(t, "balance")
}

// masterKill kills the active master with SIGKILL; the backup takes over.
// The killed one starts again as the new backup.
func masterKill(t *testing.T, r *run, logf func(string, ...any)) {
	st, err := r.c.status()
	if err != nil {
		t.Fatal(err)
	}
	role := r.c.role(st.master)
	logf("kill -9 the active master %s (%s)", role, st.master)
	r.c.run(t, "kill", role)
	if !waitFor(3*time.Minute, func() bool {
		now, err := r.c.status()
		return err == nil && now.master != "" && r.c.role(now.master) != role && len(now.servers) == 3
	}) {
		t.Fatal("the backup master did not take over within 3 minutes")
	}
	now, _ := r.c.status()
	logf("%s took over; starting %s again", now.master, role)
	r.c.run(t, "start-role", role)
	r.c.waitServers(t, 3, true, 3*time.Minute)
	// The new master must also serve region operations.
	r.c.must(t, "balance")
}

// otherServer picks a live server other than from.
func (r *run) otherServer(servers []string, from string) string {
	for {
		s := servers[r.rnd.IntN(len(servers))]
		if s != from || len(servers) == 1 {
			return s
		}
	}
}

// shuffle moves every region of table to a random other server.
func (r *run) shuffle(t *testing.T, table string) {
	servers := r.liveServers(t)
	for _, l := range r.c.regions(t, table) {
		r.c.must(t, "move %s %s", l.encoded, r.otherServer(servers, l.server))
	}
}

// splitAll splits every region of table at the middle of its key range.
func (r *run) splitAll(t *testing.T, table string) {
	for _, l := range r.c.regions(t, table) {
		if m := middle(unhex(l.start), unhex(l.end)); m != nil {
			r.regionOp(t, table, "split %s %s", l.encoded, hex.EncodeToString(m))
		}
	}
}

// splitAt splits the region of table holding key at key.
func (r *run) splitAt(t *testing.T, table string, key []byte) {
	for _, l := range r.c.regions(t, table) {
		s, e := unhex(l.start), unhex(l.end)
		if bytes.Compare(key, s) > 0 && (len(e) == 0 || bytes.Compare(key, e) < 0) {
			r.regionOp(t, table, "split %s %s", l.encoded, hex.EncodeToString(key))
			return
		}
	}
}

// mergePairs merges the regions of table two by two in key order.
func (r *run) mergePairs(t *testing.T, table string) {
	ls := r.c.regions(t, table)
	sort.Slice(ls, func(i, j int) bool { return bytes.Compare(unhex(ls[i].start), unhex(ls[j].start)) < 0 })
	for i := 0; i+1 < len(ls); i += 2 {
		r.regionOp(t, table, "merge %s %s", ls[i].encoded, ls[i+1].encoded)
	}
}

// regionOp runs a split or merge of a region of table. A region fresh from
// a split or merge still refers to its parents' files and HBase refuses to
// split or merge it again until a compaction rewrote them and the catalog
// janitor cleared the parents: then the table is compacted, the janitor run,
// and the operation tried again.
func (r *run) regionOp(t *testing.T, table, format string, args ...any) {
	t.Helper()
	end := time.Now().Add(3 * time.Minute)
	for {
		_, err := r.c.do(format, args...)
		if err == nil {
			return
		}
		refs := false
		for _, s := range []string{"not mergeable", "NOT splittable", "merge qualifier"} {
			refs = refs || strings.Contains(err.Error(), s)
		}
		if !refs || time.Now().After(end) {
			t.Fatal(err)
		}
		r.c.must(t, "compact %s", table)
		time.Sleep(3 * time.Second) // the discharger archives replaced files every 5 s
	}
}

// middle is a row key halfway between start and end (end empty: the end of
// the key space) in their first four bytes, or nil if none lies strictly
// between them there.
func middle(start, end []byte) []byte {
	a := uint64(prefix32(start))
	b := uint64(1) << 32
	if len(end) > 0 {
		b = uint64(prefix32(end))
	}
	m := (a + b) / 2
	if m <= a || m >= b {
		return nil
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(m))
	for len(out) > 1 && out[len(out)-1] == 0 {
		out = out[:len(out)-1]
	}
	if bytes.Compare(out, start) <= 0 || (len(end) > 0 && bytes.Compare(out, end) >= 0) {
		return nil
	}
	return out
}

// prefix32 is the first four bytes of k, zero-padded, as a number.
func prefix32(k []byte) uint32 {
	var b [4]byte
	copy(b[:], k)
	return binary.BigEndian.Uint32(b[:])
}
