package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
	const user, keytab = "simdex-server", "server.keytab"
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
	st, err := hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{s.ZK}, Namespace: ns,
		TLS:      hbase.TLSFiles{Enabled: true, CA: s.Path("ca.pem")},
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal(user), Keytab: s.Path(keytab), Krb5Conf: s.Krb5Conf()}})
	if err == nil || !errors.Is(err, hbase.ErrAccessDenied) {
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
	// The region servers learn grants through ZooKeeper, a moment later.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err = hbasestore.Open(ctx, hbasestore.Config{ZooKeeper: []string{s.ZK}, Namespace: ns,
			TLS:      hbase.TLSFiles{Enabled: true, CA: s.Path("ca.pem")},
			Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal(user), Keytab: s.Path(keytab), Krb5Conf: s.Krb5Conf()}})
		if err == nil {
			break
		}
		if !errors.Is(err, hbase.ErrAccessDenied) || time.Now().After(deadline) {
			t.Fatalf("opening the store with %v: %v", serve, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
		return rawCall(t, srv.base, "POST", "/v1/documents", map[string]any{"id": "b1", "text": zh + " 2"})
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		code, hdr, b := insertB()
		if code == http.StatusInternalServerError {
			var prob struct{ Type string }
			if err := json.Unmarshal(b, &prob); err != nil || !strings.HasSuffix(prob.Type, "store-denied") || hdr.Get("Retry-After") != "" {
				t.Fatalf("insert without WRITE: %d %v %s, want kind store-denied and no Retry-After", code, hdr, b)
			}
			break
		}
		if code/100 != 2 || time.Now().After(deadline) {
			t.Fatalf("insert without WRITE: %d %s, want 500 store-denied", code, b)
		}
		// Allowed: the region server has not learnt the revoke yet; the
		// document is deleted so the next try inserts again.
		if st, b := srv.do(t, "DELETE", "/v1/documents/b1", nil); st != http.StatusNoContent {
			t.Fatalf("delete b1: %d %s", st, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st, b := srv.do(t, "POST", "/v1/check", map[string]any{"text": text}); st != 200 {
		t.Fatalf("check without WRITE: %d %s", st, b)
	}
	if err := owner.Grant(ctx, write); err != nil {
		t.Fatalf("grant %s: %v", write, err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		code, _, b := insertB()
		if code == http.StatusCreated {
			break
		}
		if code != http.StatusInternalServerError || time.Now().After(deadline) {
			t.Fatalf("insert with WRITE back: %d %s", code, b)
		}
		time.Sleep(200 * time.Millisecond)
	}

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
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := st.DropHistory(ctx, tb)
			if err == nil {
				break
			}
			if !errors.Is(err, hbase.ErrAccessDenied) || time.Now().After(deadline) {
				t.Fatalf("store compaction of %s with %v: %v", tb, all, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// rawCall is apiCall with the response's headers.
func rawCall(t *testing.T, base, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
