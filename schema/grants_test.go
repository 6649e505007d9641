package schema

import (
	"errors"
	"slices"
	"testing"
)

// TestGrants: the permissions a server's principal gets are READ and WRITE
// on the namespace, and CREATE on exactly the tables its compaction
// flushes and major-compacts, unless it leaves HBase's store files alone.
func TestGrants(t *testing.T) {
	s := Schema{Namespace: "news"}.WithDefaults()
	for _, tc := range []struct {
		name       string
		user       string
		role       Role
		compaction bool
		want       []string // Permission.String of each
		err        bool
	}{
		{"server", "svc", RoleServer, true, []string{"svc RW on namespace news", "svc C on table news:index", "svc C on table news:seen"}, false},
		{"server keeping store history", "svc", RoleServer, false, []string{"svc RW on namespace news"}, false},
		{"a group", "@simdex", RoleServer, false, []string{"@simdex RW on namespace news"}, false},
		{"loader", "etl", RoleLoader, false, []string{"etl RW on namespace news", "etl C on table news:index", "etl C on table news:fp",
			"etl C on table news:docs", "etl C on table news:bands"}, false},
		{"no user", "", RoleServer, true, nil, true},
		{"unknown role", "svc", Role("owner"), true, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perms, err := s.Grants(tc.user, tc.role, tc.compaction)
			if tc.err {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Grants: %v, %v; want ErrInvalid", perms, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range perms {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Grants = %q, want %q", got, tc.want)
			}
		})
	}
}
