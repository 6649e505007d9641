package hbase

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/hbase/internal/pb"
)

func TestParseRights(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // RightString of the result; "" for an error
	}{
		{"RW", "RW"},
		{"rw", "RW"},
		{"WR", "RW"},
		{"RWXCA", "RWXCA"},
		{"CCR", "RC"},
		{"A", "A"},
		{"", ""},
		{"RWZ", ""},
		{"R W", ""},
		{"读", ""},
	} {
		got, err := ParseRights(tc.in)
		switch {
		case tc.want == "" && !errors.Is(err, ErrInvalidArgument):
			t.Errorf("ParseRights(%q) = %v, %v; want ErrInvalidArgument", tc.in, got, err)
		case tc.want != "" && (err != nil || RightString(got) != tc.want):
			t.Errorf("ParseRights(%q) = %v (%s), %v; want %s", tc.in, got, RightString(got), err, tc.want)
		}
	}
}

// TestPermissionProto: a permission becomes the UserPermission HBase reads
// (scope by type, rights as its Action numbers) and comes back the same.
func TestPermissionProto(t *testing.T) {
	for _, tc := range []struct {
		p        Permission
		typ      pb.Permission_Type
		wantBack Permission // zero: p itself
		err      bool
	}{
		{p: Permission{User: "svc", Table: "ns:index", Rights: []Right{RightRead, RightWrite}}, typ: pb.Permission_Table},
		{p: Permission{User: "svc", Table: "plain", Rights: []Right{RightCreate}}, typ: pb.Permission_Table,
			wantBack: Permission{User: "svc", Table: "default:plain", Rights: []Right{RightCreate}}},
		{p: Permission{User: "@ops", Namespace: "simdex", Rights: []Right{RightRead, RightWrite, RightExec, RightCreate, RightAdmin}}, typ: pb.Permission_Namespace},
		{p: Permission{User: "admin", Rights: []Right{RightAdmin}}, typ: pb.Permission_Global},
		{p: Permission{Table: "t", Rights: []Right{RightRead}}, err: true},
		{p: Permission{User: "u", Table: "t", Namespace: "ns", Rights: []Right{RightRead}}, err: true},
		{p: Permission{User: "u", Table: "bad:", Rights: []Right{RightRead}}, err: true},
		{p: Permission{User: "u", Table: "t", Rights: []Right{Right(5)}}, err: true},
	} {
		up, err := tc.p.proto()
		if tc.err {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%+v: %v, want ErrInvalidArgument", tc.p, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.p, err)
			continue
		}
		if up.GetPermission().GetType() != tc.typ {
			t.Errorf("%s: type %v, want %v", tc.p, up.GetPermission().GetType(), tc.typ)
		}
		want := tc.wantBack
		if want.User == "" {
			want = tc.p
		}
		if got := fromUserPermission(up); got.User != want.User || got.Table != want.Table || got.Namespace != want.Namespace || !slices.Equal(got.Rights, want.Rights) {
			t.Errorf("%s: back as %+v, want %+v", tc.p, got, want)
		}
	}
}

// FuzzParseRights: whatever ParseRights accepts, RightString writes back
// as letters it accepts again, the same rights.
func FuzzParseRights(f *testing.F) {
	for _, s := range []string{"RW", "rwxca", "", "Q", "RRW"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rights, err := ParseRights(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("ParseRights(%q): %v, not ErrInvalidArgument", s, err)
			}
			return
		}
		str := RightString(rights)
		// One letter per right, in HBase's order (so, no repeats).
		if len(str) != len(rights) || !inOrder(str) {
			t.Fatalf("RightString(%v) = %q", rights, str)
		}
		again, err := ParseRights(str)
		if err != nil || !slices.Equal(again, rights) {
			t.Fatalf("ParseRights(%q) = %v, %v; want %v", str, again, err, rights)
		}
	})
}

// inOrder reports whether s's letters are distinct letters of
// actionLetters in its order.
func inOrder(s string) bool {
	last := -1
	for _, r := range s {
		i := strings.IndexRune(actionLetters, r)
		if i <= last {
			return false
		}
		last = i
	}
	return true
}
