package seen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHashSetAgreesWithMap: the open-addressing set answers exactly what
// a map answers, for sizes around the growth steps, with hash 0, repeats,
// clustered and full-width hashes, and after reuse of a larger table.
func TestHashSetAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s hashSet
	for _, n := range []int{0, 1, 7, 8, 9, 1000, 1023, 1024, 1025, 3000, 5} {
		for _, bits := range []int{32, 40, 64} {
			want := map[uint64]bool{}
			add := make([]uint64, 0, n)
			for range n {
				h := rng.Uint64() >> (64 - bits)
				switch rng.IntN(10) {
				case 0:
					h = 0
				case 1: // clustered: neighbours probe the same slots
					h = uint64(rng.IntN(64))
				case 2:
					if len(add) > 0 {
						h = add[rng.IntN(len(add))]
					}
				}
				add = append(add, h)
				want[h] = true
			}
			s.reset(len(add))
			for _, h := range add {
				s.add(h)
			}
			if s.n != len(want) {
				t.Fatalf("n=%d bits=%d: %d members, want %d", n, bits, s.n, len(want))
			}
			for h := range want {
				if !s.has(h) {
					t.Fatalf("n=%d bits=%d: member %x missing", n, bits, h)
				}
			}
			for range 5000 {
				h := rng.Uint64() >> (64 - bits)
				if rng.IntN(4) == 0 {
					h = uint64(rng.IntN(128))
				}
				if s.has(h) != want[h] {
					t.Fatalf("n=%d bits=%d: has(%x) = %v, want %v", n, bits, h, s.has(h), want[h])
				}
			}
		}
	}
	var empty hashSet // never reset: a row with no cells
	if empty.has(0) || empty.has(1) {
		t.Fatal("an empty set has members")
	}
}

// TestPlainIDAgreesWithCheckID: the ASCII fast path accepts only ids the
// full checks accept, and every printable-ASCII id they accept.
func TestPlainIDAgreesWithCheckID(t *testing.T) {
	ids := []string{"", "a", "abc/def", "x\x00y", "tab\t", "del\x7f", "é", "\xff", "\u0085", strings.Repeat("a", MaxIDBytes), strings.Repeat("a", MaxIDBytes+1), " ", "~"}
	for c := range 256 {
		ids = append(ids, "id"+string(rune(c)), "id"+string([]byte{byte(c)}))
	}
	for _, id := range ids {
		for _, user := range []bool{false, true} {
			if !plainID(id, user) {
				continue
			}
			// checkID calls plainID first: these are its other checks.
			slowOK := id != "" && len(id) <= MaxIDBytes && utf8.ValidString(id) && !hasControl(id) && !(user && strings.Contains(id, "/"))
			if !slowOK {
				t.Errorf("plainID(%q, %v) accepts an id the full checks refuse", id, user)
			}
		}
	}
	for c := 0x20; c < 0x7f; c++ {
		if id := "a" + string(rune(c)); !plainID(id, false) {
			t.Errorf("plainID refuses the printable id %q", id)
		}
	}
}

// TestFilterIntoMatchesFilter: FilterInto answers what Filter answers,
// into a fresh or reused answer, with Kept an empty list (never nil)
// when every candidate is seen, as Filter's (the server writes "kept": []).
func TestFilterIntoMatchesFilter(t *testing.T) {
	s := openService(t, openPebble(t), Config{})
	if _, err := s.Mark(bg, "u", []Mark{{ID: "a"}, {ID: "b"}, {ID: "c"}}); err != nil {
		t.Fatal(err)
	}
	var reused FilterResult
	for _, ids := range [][]string{{"a", "b"}, {"x", "a", "y", "c", "z"}, {"c"}, {"q"}, {"b", "a"}} {
		req := FilterRequest{User: "u"}
		for _, id := range ids {
			req.Candidates = append(req.Candidates, Candidate{ID: id})
		}
		want, err := s.Filter(bg, req)
		if err != nil {
			t.Fatal(err)
		}
		var fresh FilterResult
		for _, got := range []*FilterResult{&fresh, &reused} {
			if err := s.FilterInto(bg, req, got); err != nil {
				t.Fatal(err)
			}
			if got.Kept == nil || !slices.Equal(got.Kept, want.Kept) || !slices.Equal(got.Dropped, want.Dropped) || len(got.UnknownDocs) != 0 {
				t.Fatalf("%q: FilterInto %+v (kept nil: %v), Filter %+v", ids, *got, got.Kept == nil, want)
			}
		}
	}
}

// TestPlainIDWords: the word-at-a-time scan of plainID against a byte at
// a time, for every byte value at every position of ids of lengths around
// word multiples (so each lane of the word tests, the borrows between
// lanes and the overlapping last word are exercised), users and items.
func TestPlainIDWords(t *testing.T) {
	ref := func(id string, user bool) bool {
		if len(id) == 0 || len(id) > MaxIDBytes {
			return false
		}
		for i := 0; i < len(id); i++ {
			if c := id[i]; c < 0x20 || c >= 0x7f || (user && c == '/') {
				return false
			}
		}
		return true
	}
	// Lengths below a word, at and around word multiples (the last word
	// overlaps the one before unless the length is a multiple of eight).
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 18, 23, 24, 25} {
		for pos := range n {
			for c := range 256 {
				for _, fill := range []byte{'0', ' ', '~', '!'} {
					id := bytes.Repeat([]byte{fill}, n)
					id[pos] = byte(c)
					for _, user := range []bool{false, true} {
						if got, want := plainID(string(id), user), ref(string(id), user); got != want {
							t.Fatalf("plainID(%q, %v) = %v, want %v", id, user, got, want)
						}
					}
				}
			}
		}
	}
}

// TestFilterFlagsMatchesFilter: FilterFlags drops exactly what Filter
// drops for the same plain ids (random marks, deletes, deltas and a fold,
// lists with repeats and unknown ids, a reused flag buffer), refuses what
// Filter refuses.
func TestFilterFlagsMatchesFilter(t *testing.T) {
	s := openService(t, openPebble(t), Config{})
	rng := rand.New(rand.NewPCG(3, 4))
	id := func() string { return fmt.Sprintf("it-%d", rng.IntN(300)) }
	for round := range 6 {
		for u := range 3 {
			user := fmt.Sprint("ff-", u)
			marks := make([]Mark, 40)
			for k := range marks {
				marks[k] = Mark{ID: id()}
			}
			if _, err := s.Mark(bg, user, marks); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(bg, user, id()); err != nil {
				t.Fatal(err)
			}
		}
		if round == 3 {
			if _, err := s.FoldAll(bg); err != nil {
				t.Fatal(err)
			}
		}
		var flags []bool
		for u := range 4 { // ff-3 has seen nothing
			user := fmt.Sprint("ff-", u)
			ids := make([]string, 1+rng.IntN(200))
			cands := make([]Candidate, len(ids))
			for k := range ids {
				ids[k] = id()
				cands[k] = Candidate{ID: ids[k]}
			}
			res, err := s.Filter(bg, FilterRequest{User: user, Candidates: cands})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]bool, len(ids))
			for _, d := range res.Dropped {
				want[d.Index] = true
			}
			if flags, err = s.FilterFlags(bg, user, ids, flags); err != nil || !slices.Equal(flags, want) {
				t.Fatalf("round %d %s: FilterFlags %v, %v; Filter drops %v", round, user, flags, err, want)
			}
		}
	}
	for _, bad := range []struct {
		user string
		ids  []string
	}{{"", []string{"a"}}, {"a/b", []string{"a"}}, {"u", []string{""}}, {"u", []string{"a\x00"}}, {"u", make([]string, DefaultMaxItems+1)}} {
		_, ferr := s.Filter(bg, FilterRequest{User: bad.user, Candidates: make([]Candidate, len(bad.ids))})
		if _, err := s.FilterFlags(bg, bad.user, bad.ids, nil); err == nil || ferr == nil {
			t.Errorf("user %q, %d ids: FilterFlags %v, Filter %v; want both refused", bad.user, len(bad.ids), err, ferr)
		}
	}
}
