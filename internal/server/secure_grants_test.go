package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
)

// TestSecureHBaseServerGranted: on a cluster that checks permissions, a
// server whose principal is no superuser and owns nothing runs on what
// schema.Grants gives its role, and on no less. The tables' owner creates
// them and grants READ and WRITE on the namespace: the server starts
// (reading what the table descriptors would have told it, since it may not
// describe the tables), inserts, checks, settles racing insert-if-unique
// calls, marks items seen and deletes; the store compaction it would run
// is refused (AccessDeniedException from the flush). With the role's
// CREATE on the index and seen tables added, that compaction runs.
func TestSecureHBaseServerGranted(t *testing.T) {
	s := hbasetest.Secure(t)
	if !s.Authorization {
		t.Skip("the secured HBase does not check permissions (SIMDEX_HBASE_AUTHORIZATION=0)")
	}
	const user, keytab = hbasetest.Grantee, hbasetest.GranteeKeytab
	ns := hbaseNamespaceWith(t, "sgrant", func() (*hbase.Client, error) { return secureClient(s, "simdex", "simdex.keytab") })
	owner, err := secureClient(s, "simdex", "simdex.keytab")
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sc := schema.Schema{Namespace: ns}.WithDefaults()
	if _, err := schema.Create(ctx, owner, sc); err != nil {
		t.Fatalf("create the schema as its owner: %v", err)
	}

	// A store of the server's principal, to see what it may do directly.
	storeCfg := hbasestore.Config{ZooKeeper: []string{s.ZK}, Namespace: ns,
		TLS:      hbase.TLSFiles{Enabled: s.TLS, CA: s.TLSPath("ca.pem")},
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal(user), Keytab: s.Path(keytab), Krb5Conf: s.Krb5Conf()}}
	if _, err := hbasestore.Open(ctx, storeCfg); !errors.Is(err, hbase.ErrAccessDenied) {
		t.Fatalf("opening the store before any grant: %v, want AccessDeniedException", err)
	}
	serve, err := sc.Grants(user, schema.RoleServer, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range serve {
		if err := owner.Grant(ctx, p); err != nil {
			t.Fatalf("grant %s: %v", p, err)
		}
	}
	var st *hbasestore.Store
	hbasetest.Eventually(t, fmt.Sprintf("opening the store with %v", serve), func() (err error) {
		st, err = hbasestore.Open(ctx, storeCfg)
		return err
	}, denied)
	defer st.Close()

	srv := startHBaseServerWith(t, s.ZK, ns, false, secureHBaseAs(s, user, keytab))
	text := readText(t, "en_article.txt")
	if st, b := srv.do(t, "POST", "/v1/documents", map[string]any{"id": "a1", "text": text}); st != http.StatusCreated {
		t.Fatalf("insert: %d %s", st, b)
	}
	var chk checkResponse
	st2, b := srv.do(t, "POST", "/v1/check", map[string]any{"text": lightEdit(text)})
	if err := json.Unmarshal(b, &chk); err != nil || st2 != 200 || !chk.Duplicate || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != "a1" {
		t.Fatalf("check edited copy: %d %s", st2, b)
	}
	zh := readText(t, "zh_article.txt")
	answers := insertOnBoth(t, srv, srv, 1, [2]string{zh, lightEdit(zh)})
	if t.Failed() {
		t.FailNow()
	}
	if stored := btoi(answers[0].Stored) + btoi(answers[1].Stored); stored != 1 {
		t.Errorf("racing insert-if-unique of near-copies stored %d, want exactly 1: %+v", stored, answers)
	}
	if st, b := srv.do(t, "POST", "/v1/users/reader-1/seen", map[string]any{"items": []map[string]any{{"id": "x1"}}}); st/100 != 2 {
		t.Fatalf("mark seen: %d %s", st, b)
	}
	if st, b := srv.do(t, "DELETE", "/v1/documents/a1", nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d %s", st, b)
	}

	// WRITE taken away: an insert is refused as the server's own fault
	// (500, kind store-denied, no Retry-After: retrying cannot help), a
	// check still answers, and the insert goes through once WRITE is back.
	write := hbase.Permission{User: user, Namespace: ns, Rights: []hbase.Right{hbase.RightWrite}}
	if err := owner.Revoke(ctx, write); err != nil {
		t.Fatalf("revoke %s: %v", write, err)
	}
	insertB := func() (int, http.Header, []byte) {
		return apiCallHeader(t, srv.base, "", "POST", "/v1/documents", map[string]any{"id": "b1", "text": zh + " 2"})
	}
	hbasetest.Eventually(t, "insert without WRITE", func() error {
		code, hdr, b := insertB()
		var prob struct{ Type string }
		switch {
		case code == http.StatusInternalServerError:
			if err := json.Unmarshal(b, &prob); err != nil || !strings.HasSuffix(prob.Type, "store-denied") || hdr.Get("Retry-After") != "" {
				return fmt.Errorf("%d %v %s, want kind store-denied and no Retry-After", code, hdr, b)
			}
			return nil
		case code/100 == 2:
			// The region server has not learnt the revoke yet: delete the
			// document, so that the next try inserts again.
			if st, b := srv.do(t, "DELETE", "/v1/documents/b1", nil); st != http.StatusNoContent {
				return fmt.Errorf("delete b1: %d %s", st, b)
			}
			return errNotYet
		}
		return fmt.Errorf("%d %s, want 500 store-denied", code, b)
	}, func(err error) bool { return err == errNotYet })
	if st, b := srv.do(t, "POST", "/v1/check", map[string]any{"text": text}); st != 200 {
		t.Fatalf("check without WRITE: %d %s", st, b)
	}
	if err := owner.Grant(ctx, write); err != nil {
		t.Fatalf("grant %s: %v", write, err)
	}
	hbasetest.Eventually(t, "insert with WRITE back", func() error {
		switch code, _, b := insertB(); code {
		case http.StatusCreated:
			return nil
		case http.StatusInternalServerError:
			return errNotYet
		default:
			return fmt.Errorf("%d %s", code, b)
		}
	}, func(err error) bool { return err == errNotYet })

	// The store compaction takes CREATE on the index and seen tables.
	for _, tb := range []storage.Table{storage.TableIndex, storage.TableSeen} {
		if err := st.DropHistory(ctx, tb); !errors.Is(err, hbase.ErrAccessDenied) {
			t.Errorf("store compaction of %s with %v: %v, want AccessDeniedException", tb, serve, err)
		}
	}
	all, err := sc.Grants(user, schema.RoleServer, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if err := owner.Grant(ctx, p); err != nil {
			t.Fatalf("grant %s: %v", p, err)
		}
	}
	for _, tb := range []storage.Table{storage.TableIndex, storage.TableSeen} {
		hbasetest.Eventually(t, fmt.Sprintf("store compaction of %s with %v", tb, all), func() error { return st.DropHistory(ctx, tb) }, denied)
	}
}

// denied reports a refusal by the permissions a region server has not yet
// updated.
func denied(err error) bool { return errors.Is(err, hbase.ErrAccessDenied) }

// errNotYet: a call still answered by the permissions before the change.
var errNotYet = errors.New("the region server has not applied the permission change yet")

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
