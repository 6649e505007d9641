package seen

import (
	"errors"
	"testing"
	"time"
)

// TestUser: one user's live items and bytes are what Stats counts for the
// user; marks past the retention leave the count; an unknown user has
// seen nothing; a bad user id is refused.
func TestUser(t *testing.T) {
	clock := newClock()
	st := openPebble(t)
	s := openService(t, st, Config{Retention: 24 * time.Hour, BucketWidth: time.Hour, Now: clock.Now})
	if _, err := s.Mark(bg, "u1", []Mark{{ID: "a"}, {ID: "b"}, {ID: "c", Fingerprint: 42, HasFingerprint: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mark(bg, "u2", []Mark{{ID: "x"}}); err != nil {
		t.Fatal(err)
	}
	u, err := s.User(bg, "u1")
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Stats(bg, 10)
	if err != nil {
		t.Fatal(err)
	}
	var want UserStats
	for _, f := range all.Fullest {
		if f.User == "u1" {
			want = f
		}
	}
	if u != want || u.Items != 3 || u.Bytes == 0 {
		t.Errorf("User(u1) = %+v, Stats counts %+v; want 3 items", u, want)
	}
	if u, err := s.User(bg, "nobody"); err != nil || u.Items != 0 || u.Bytes != 0 || u.User != "nobody" {
		t.Errorf("User(nobody) = %+v, %v; want nothing seen", u, err)
	}
	clock.Advance(48 * time.Hour)
	if u, err := s.User(bg, "u1"); err != nil || u.Items != 0 {
		t.Errorf("User(u1) after the retention = %+v, %v; want 0 items", u, err)
	}
	if _, err := s.User(bg, ""); !errors.Is(err, ErrBadUser) {
		t.Errorf("User(\"\") = %v, want ErrBadUser", err)
	}
}
