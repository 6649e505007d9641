package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage/hbasestore"
)

func startHBaseServer(t *testing.T, zk, ns string, create bool) *runServer {
	t.Helper()
	return startHBaseServerWith(t, zk, ns, create, nil)
}

// startHBaseServerWith is startHBaseServer with the config adjusted by mod.
func startHBaseServerWith(t *testing.T, zk, ns string, create bool, mod func(*Config)) *runServer {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Store, cfg.HBaseZK, cfg.HBaseNamespace, cfg.HBaseCreateTables = "hbase", zk, ns, create
	cfg.LogLevel = "warn"
	if mod != nil {
		mod(&cfg)
	}
	return startRun(t, cfg)
}

func (s *runServer) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	return apiCall(t, s.base, "", method, path, body)
}

// checkAfterRestart checks what a restarted server finds of the smoke
// tests' data: text stored as a1, and "gone" deleted.
func (s *runServer) checkAfterRestart(t *testing.T, text string) {
	t.Helper()
	var chk checkResponse
	st, b := s.do(t, "POST", "/v1/check", map[string]any{"text": text})
	if err := json.Unmarshal(b, &chk); err != nil || st != 200 || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != "a1" {
		t.Fatalf("check after restart: %d %s", st, b)
	}
	if st, _ := s.do(t, "GET", "/v1/documents/gone", nil); st != http.StatusNotFound {
		t.Fatalf("deleted document after restart: %d", st)
	}
}

func hbaseNamespace(t *testing.T, zk string) string {
	return hbaseNamespaceWith(t, "srv", func() (*hbase.Client, error) {
		return hbase.New(hbase.Config{ZooKeeper: []string{zk}})
	})
}

// insertOnBoth inserts texts[i] as r<round>-<i> through server i of a and
// b at once, with insert-if-unique, and returns their answers; a failed
// call fails the test (not at once: the caller checks t.Failed).
func insertOnBoth(t *testing.T, a, b *runServer, round int, texts [2]string) [2]insertResponse {
	t.Helper()
	var res [2]insertResponse
	var wg sync.WaitGroup
	for i, s := range []*runServer{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, out := s.do(t, "POST", "/v1/documents", map[string]any{"id": fmt.Sprintf("r%d-%d", round, i), "text": texts[i], "mode": "insert-if-unique"})
			if err := json.Unmarshal(out, &res[i]); err != nil || (st != 200 && st != 201) {
				t.Errorf("round %d server %d: %d %s", round, i, st, out)
			}
		}()
	}
	wg.Wait()
	return res
}

// hbaseNamespaceWith names a namespace of its own for the test (prefix,
// the process and the time) and drops it when the test ends, through a
// client from connect.
func hbaseNamespaceWith(t *testing.T, prefix string, connect func() (*hbase.Client, error)) string {
	ns := hbasetest.Namespace(prefix)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := connect()
		if err != nil {
			t.Log(err)
			return
		}
		defer c.Close()
		if err := hbasestore.Drop(ctx, c, ns); err != nil {
			t.Logf("drop %s: %v", ns, err)
		}
	})
	return ns
}

// TestHBaseServerSmoke: insert, check, insert-if-unique, delete and a
// restart, through the whole server on HBase.
func TestHBaseServerSmoke(t *testing.T) {
	zk := hbasetest.ZK(t)
	ns := hbaseNamespace(t, zk)
	s := startHBaseServer(t, zk, ns, true)
	text := readText(t, "en_article.txt")
	edited := lightEdit(text)

	if st, b := s.do(t, "POST", "/v1/documents", map[string]any{"id": "a1", "text": text}); st != http.StatusCreated {
		t.Fatalf("insert: %d %s", st, b)
	}
	if st, b := s.do(t, "POST", "/v1/documents", map[string]any{"id": "gone", "text": readText(t, "zh_article.txt")}); st != http.StatusCreated {
		t.Fatalf("insert: %d %s", st, b)
	}
	var chk checkResponse
	st, b := s.do(t, "POST", "/v1/check", map[string]any{"text": edited})
	if err := json.Unmarshal(b, &chk); err != nil || st != 200 || !chk.Duplicate || len(chk.Duplicates) != 1 || chk.Duplicates[0].ID != "a1" {
		t.Fatalf("check edited copy: %d %s", st, b)
	}
	var ins insertResponse
	st, b = s.do(t, "POST", "/v1/documents", map[string]any{"id": "a1-copy", "text": edited, "mode": "insert-if-unique"})
	if err := json.Unmarshal(b, &ins); err != nil || st != 200 || ins.Stored || ins.DuplicateOf != "a1" {
		t.Fatalf("insert-if-unique of a copy: %d %s", st, b)
	}
	if st, b := s.do(t, "DELETE", "/v1/documents/gone", nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d %s", st, b)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("server stop: %v", err)
	}

	// Restarted without table creation: the tables exist, the data stays.
	s = startHBaseServer(t, zk, ns, false)
	s.checkAfterRestart(t, text)
	if st, _ := s.do(t, "GET", "/v1/documents/a1-copy", nil); st != http.StatusNotFound {
		t.Fatalf("refused copy stored: %d", st)
	}
}

// TestHBaseMissingTablesRefused: without --hbase-create-tables a server on
// an empty namespace refuses to start and names the command that fixes it.
func TestHBaseMissingTablesRefused(t *testing.T) {
	zk := hbasetest.ZK(t)
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Store, cfg.HBaseZK, cfg.HBaseNamespace = "hbase", zk, "no_such_ns_for_server"
	err := Run(context.Background(), cfg, io.Discard, nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("simdexctl schema create")) {
		t.Fatalf("Run on missing tables: %v", err)
	}
}

// TestHBaseTwoServersOneOriginal: two servers (separate HBase clients and
// in-process locks) on one HBase race insert-if-unique of the same text
// under different ids; exactly one is stored every round.
func TestHBaseTwoServersOneOriginal(t *testing.T) {
	zk := hbasetest.ZK(t)
	ns := hbaseNamespace(t, zk)
	a := startHBaseServer(t, zk, ns, true)
	b := startHBaseServer(t, zk, ns, false)
	text := readText(t, "en_article.txt")
	for round := range 15 {
		body := fmt.Sprintf("%s Round %d.", text, round)
		ins := insertOnBoth(t, a, b, round, [2]string{body, body})
		if t.Failed() {
			return
		}
		stored := []bool{ins[0].Stored, ins[1].Stored}
		if stored[0] == stored[1] {
			t.Fatalf("round %d: stored %v; want exactly one", round, stored)
		}
		// The next round's text is a near-duplicate of this one: start over.
		for i := range stored {
			if stored[i] {
				if st, out := a.do(t, "DELETE", fmt.Sprintf("/v1/documents/r%d-%d", round, i), nil); st != http.StatusNoContent {
					t.Fatalf("delete: %d %s", st, out)
				}
			}
		}
	}
}
