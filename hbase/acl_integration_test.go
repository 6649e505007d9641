package hbase

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/hbasetest"
)

// grantee is the secured HBase's principal that is not a superuser and
// that tests grant rights on their own tables (scripts/hbase/secure.sh).
const grantee = "simdex-server"

// TestSecureGrants: on a cluster that checks permissions, Grant, Revoke and
// Permissions do what the HBase shell's grant, revoke and user_permission
// do: a principal granted READ and WRITE on a table may read and write it
// but not flush it, CREATE added to that (the grant merges) lets it flush,
// revoking CREATE takes only that away, rights on a namespace cover its
// tables, and a principal without ADMIN may not grant.
func TestSecureGrants(t *testing.T) {
	s := hbasetest.Secure(t)
	if !s.Authorization {
		t.Skip("the secured HBase does not check permissions (SIMDEX_HBASE_AUTHORIZATION=0)")
	}
	tc := s.TLSConfig(t, false)
	owner := secureClient(t, s.ZK, keytabAuth(s, "simdex", "simdex.keytab"), tc)
	server := secureClient(t, s.ZK, keytabAuth(s, grantee, hbasetest.GranteeKeytab), tc)
	ctx := testCtx(t)
	table := createTable(t, owner, "grant", []FamilyDescriptor{{Name: "f"}})
	put := func(c *Client, table string) error {
		return c.Put(ctx, table, &Put{Row: []byte("r"), Values: []Value{{Family: []byte("f"), Qualifier: []byte("q"), Value: []byte("v")}}})
	}
	flush := func(c *Client, table string) error { return c.Flush(ctx, table) }

	if err := put(server, table); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("Put before any grant: %v, want ErrAccessDenied", err)
	}
	rw := Permission{User: grantee, Table: table, Rights: []Right{RightRead, RightWrite}}
	if err := owner.Grant(ctx, rw); err != nil {
		t.Fatalf("Grant %s: %v", rw, err)
	}
	eventually(t, "a Put after the grant of RW", func() error { return put(server, table) })
	res, err := server.Get(ctx, table, &Get{Row: []byte("r")})
	if err != nil || len(res.Cells) != 1 {
		t.Fatalf("Get by the grantee: %v, %d cells, want its own cell", err, len(res.Cells))
	}
	if err := flush(server, table); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("Flush with RW: %v, want ErrAccessDenied (a flush takes CREATE or ADMIN)", err)
	}
	wantRights(t, owner, table, "RW")

	cr := Permission{User: grantee, Table: table, Rights: []Right{RightCreate}}
	if err := owner.Grant(ctx, cr); err != nil {
		t.Fatalf("Grant %s: %v", cr, err)
	}
	wantRights(t, owner, table, "RWC")
	eventually(t, "a Flush after the grant of C", func() error { return flush(server, table) })

	if err := owner.Revoke(ctx, cr); err != nil {
		t.Fatalf("Revoke %s: %v", cr, err)
	}
	wantRights(t, owner, table, "RW")
	eventuallyDenied(t, "a Flush after C was revoked", func() error { return flush(server, table) })
	if err := put(server, table); err != nil {
		t.Errorf("Put after C was revoked: %v, want RW kept", err)
	}

	// The grantee has no ADMIN: it may not grant, even to itself.
	if err := server.Grant(ctx, Permission{User: grantee, Table: table, Rights: []Right{RightAdmin}}); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("Grant by a principal without ADMIN: %v, want ErrAccessDenied", err)
	}

	// Rights on a namespace cover every table in it, ones created later too.
	ns := uniqueName("grantns")
	if err := owner.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	nsTable := ns + ":t"
	if err := owner.CreateTable(ctx, &TableDescriptor{Name: nsTable, Families: []FamilyDescriptor{{Name: "f"}}}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = owner.DisableTable(ctx, nsTable)
		_ = owner.DeleteTable(ctx, nsTable)
		_ = owner.DeleteNamespace(ctx, ns)
	})
	if err := put(server, nsTable); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("Put into another namespace's table: %v, want ErrAccessDenied", err)
	}
	nsRW := Permission{User: grantee, Namespace: ns, Rights: []Right{RightRead, RightWrite}}
	if err := owner.Grant(ctx, nsRW); err != nil {
		t.Fatalf("Grant %s: %v", nsRW, err)
	}
	eventually(t, "a Put after the namespace grant", func() error { return put(server, nsTable) })
	got, err := owner.Permissions(ctx, grantee, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Namespace != ns || RightString(got[0].Rights) != "RW" {
		t.Errorf("Permissions on namespace %s: %v, want %s", ns, got, nsRW)
	}
}

// wantRights checks that the grantee holds exactly rights on table.
func wantRights(t *testing.T, c *Client, table, rights string) {
	t.Helper()
	got, err := c.Permissions(testCtx(t), "", "", table)
	if err != nil {
		t.Fatalf("Permissions on %s: %v", table, err)
	}
	i := slices.IndexFunc(got, func(p Permission) bool { return p.User == grantee })
	if i < 0 || got[i].Table != table || RightString(got[i].Rights) != rights {
		t.Errorf("Permissions on %s: %v, want %s %s", table, got, grantee, rights)
	}
}

// eventually retries call until it succeeds: the region servers learn a
// grant from ZooKeeper a moment after the master wrote it, and refuse
// meanwhile, with ErrAccessDenied and nothing else.
func eventually(t *testing.T, what string, call func() error) {
	t.Helper()
	hbasetest.Eventually(t, what, call, func(err error) bool { return errors.Is(err, ErrAccessDenied) })
}

// errNotYet: the call a revoke should refuse still went through.
var errNotYet = errors.New("allowed: the revoke has not reached the region server yet")

// eventuallyDenied retries call until it is refused with ErrAccessDenied.
func eventuallyDenied(t *testing.T, what string, call func() error) {
	t.Helper()
	hbasetest.Eventually(t, what+", want ErrAccessDenied", func() error {
		err := call()
		switch {
		case errors.Is(err, ErrAccessDenied):
			return nil
		case err == nil:
			return errNotYet
		}
		return err
	}, func(err error) bool { return err == errNotYet })
}

// TestGrantWithoutAuthorization: on a cluster that does not check
// permissions (the test HBase), Grant fails at once, not retried, with the
// master's reason: the AccessController is not loaded.
func TestGrantWithoutAuthorization(t *testing.T) {
	c := newTestClient(t)
	ctx := testCtx(t)
	err := c.Grant(ctx, Permission{User: grantee, Namespace: testNamespace, Rights: []Right{RightRead}})
	var re *RemoteError
	switch {
	case err == nil:
		t.Fatal("Grant on a cluster without authorization: no error")
	case !errors.As(err, &re) || errors.Is(err, ErrRetriesExhausted):
		t.Fatalf("Grant on a cluster without authorization: %v, want the master's error, not retried", err)
	}
	t.Log(err)
	if _, err := c.Permissions(ctx, "", testNamespace, ""); err == nil {
		t.Error("Permissions on a cluster without authorization: no error")
	}
}
