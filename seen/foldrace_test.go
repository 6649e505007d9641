package seen

import (
	"context"
	"testing"
	"time"
)

// TestWriteDuringFold runs a delete-then-mark, a forget, or a plain mark of
// a user while a fold of that user sits between its read and its rewrite
// (a hook holds the fold there until the write has finished or has been
// blocked for a while). The final state must be the one the writes' order
// gives: the re-marked item seen, the forgotten user empty, the new mark
// kept. Deletes and forgets wait for the fold's lock; without it the fold
// writes back what it read over them.
func TestWriteDuringFold(t *testing.T) {
	const user = "u1"
	cases := []struct {
		name  string
		write func(s *Service) error
		want  map[string]bool
	}{
		{"delete then mark again", func(s *Service) error {
			if err := s.Delete(bg, user, "a"); err != nil {
				return err
			}
			_, err := s.Mark(bg, user, []Mark{{ID: "a"}})
			return err
		}, map[string]bool{"a": true, "b": true, "c": false}},
		{"delete", func(s *Service) error { return s.Delete(bg, user, "a") },
			map[string]bool{"a": false, "b": true, "c": false}},
		{"forget", func(s *Service) error { return s.Forget(bg, user) },
			map[string]bool{"a": false, "b": false, "c": false}},
		{"mark", func(s *Service) error {
			_, err := s.Mark(bg, user, []Mark{{ID: "c"}})
			return err
		}, map[string]bool{"a": true, "b": true, "c": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openService(t, openPebble(t), Config{})
			if _, err := s.Mark(bg, user, []Mark{{ID: "a"}, {ID: "b"}}); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			s.afterFoldRead = func([]byte) {
				go func() { done <- tc.write(s) }() // joined below
				select {
				case err := <-done:
					done <- err // finished inside the window (marks need no lock)
				case <-time.After(300 * time.Millisecond):
					// blocked on the fold's lock, as deletes and forgets must be
				}
			}
			ctx, cancel := context.WithTimeout(bg, 30*time.Second)
			defer cancel()
			if _, err := s.FoldUser(ctx, user); err != nil {
				t.Fatal(err)
			}
			s.afterFoldRead = nil
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for _, fold := range []bool{false, true} { // before and after the next fold
				if fold {
					if _, err := s.FoldUser(bg, user); err != nil {
						t.Fatal(err)
					}
				}
				ids := []string{"a", "b", "c"}
				got, err := s.Check(bg, user, ids)
				if err != nil {
					t.Fatal(err)
				}
				for i, id := range ids {
					if got[i] != tc.want[id] {
						t.Errorf("after fold=%v: %s seen = %v, want %v", fold, id, got[i], tc.want[id])
					}
				}
			}
		})
	}
}
