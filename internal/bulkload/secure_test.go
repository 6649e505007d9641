package bulkload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/fingerprint"
	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/kvindex"
	"github.com/simdex/simdex/schema"
	"github.com/simdex/simdex/storage/hbasestore"
)

// secureStoreConfig is the store configuration cmd/bulkload makes from its
// Kerberos and TLS flags on the secured HBase: simdex with its keytab,
// TLS with the cluster's CA, ZooKeeper by SASL.
func secureStoreConfig(s *hbasetest.SecureCluster, ns string) hbasestore.Config {
	return hbasestore.Config{
		ZooKeeper: []string{s.ZK}, Namespace: ns, CreateTables: true,
		TLS:      hbase.TLSFiles{Enabled: s.TLS, CA: s.TLSPath("ca.pem")},
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal("simdex"), Keytab: s.Path("simdex.keytab"), Krb5Conf: s.Krb5Conf()},
	}
}

// openSecureIndex opens an index on fresh tables of the secured HBase in a
// namespace of its own, dropped when the test ends.
func openSecureIndex(t *testing.T, s *hbasetest.SecureCluster) *kvindex.Index {
	t.Helper()
	ns := fmt.Sprintf("sbl%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, hbNS.Add(1))
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	st, err := hbasestore.Open(ctx, secureStoreConfig(s, ns))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, MaxCellBytes: 1024,
		Locker: st.Locker(), Bands: kvindex.BandsOff})
	if err != nil {
		_ = st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		if err := hbasestore.Drop(ctx, st.Client(), ns); err != nil {
			t.Logf("drop %s: %v", ns, err)
		}
		ix.Close()
	})
	return ix
}

// stagingEntries lists HBase's bulk-load staging directory (one
// subdirectory per PrepareBulkLoad token until CleanupBulkLoad) of the
// secured standalone HBase, whose root directory is on the local disk (the
// region server makes the staging directory when it starts).
func stagingEntries(t *testing.T, s *hbasetest.SecureCluster) []string {
	t.Helper()
	des, err := os.ReadDir(s.Path("hbase/root/staging"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// leftHFiles lists the files under the load's HFile directory.
func leftHFiles(t *testing.T, cpDir string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(cpDir, "hfiles", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// TestSecureHFileImport is the HFile import path (cmd/bulkload --hbase-import
// hfile) on the secured HBase (Kerberos with ZooKeeper by SASL, TLS): the
// region server checks that the Kerberos caller may read and write each
// file, and the files here belong to the OS user, so with the default mode
// 0644 the load fails with ErrBulkLoadUnreadable naming the setting, and
// with FileMode 0666 it loads exactly the cells a puts load does. Either
// way the load's HFile directory is emptied and HBase's staging directory
// keeps no token of the load.
func TestSecureHFileImport(t *testing.T) {
	s := hbasetest.Secure(t)
	dir := t.TempDir()
	docs := genFPs(31, 3000)
	glob, _ := inputs(t, dir, docs)
	stagingBefore := stagingEntries(t, s)

	ref := openSecureIndex(t, s)
	want, err := Run(bg, ref, withCP(hbaseConfig(dir, glob), filepath.Join(dir, "cp-puts")))
	if err != nil {
		t.Fatalf("puts load: %v", err)
	}
	refDump := dump(t, ref)

	t.Run("refused", func(t *testing.T) {
		ix := openSecureIndex(t, s)
		cp := filepath.Join(dir, "cp-refused")
		start := time.Now()
		_, err := Run(bg, ix, withCP(hfileConfig(dir, glob), cp))
		if !errors.Is(err, hbase.ErrBulkLoadUnreadable) || !strings.Contains(err.Error(), "--hbase-hfile-mode") {
			t.Fatalf("hfile load of 0644 files: %v\nwant ErrBulkLoadUnreadable naming --hbase-hfile-mode", err)
		}
		t.Logf("%v (after %v)", err, time.Since(start).Round(time.Millisecond))
		if left := leftHFiles(t, cp); len(left) != 0 {
			t.Errorf("HFiles left behind after the refused import: %v", left)
		}
	})

	t.Run("mode 0666", func(t *testing.T) {
		ix := openSecureIndex(t, s)
		cp := filepath.Join(dir, "cp-hfile")
		cfg := withCP(hfileConfig(dir, glob), cp)
		cfg.Import.FileMode = 0o666
		var mu sync.Mutex // tables commit concurrently
		modes := map[os.FileMode]int{}
		cfg.beforeImport = func(kind string, files []string) {
			mu.Lock()
			defer mu.Unlock()
			for _, f := range files {
				st, err := os.Stat(f)
				if err != nil {
					t.Error(err)
					continue
				}
				modes[st.Mode().Perm()]++
			}
		}
		got, err := Run(bg, ix, cfg)
		if err != nil {
			t.Fatalf("hfile load: %v", err)
		}
		if len(modes) != 1 || modes[0o666] == 0 {
			t.Errorf("HFile modes before the imports: %v, want all 0666", modes)
		}
		if d := diff(refDump, dump(t, ix)); d != "" {
			t.Errorf("HFile import differs from the puts load:\n%s", d)
		}
		if got.HFilesImported < int64(ix.Layout().NumTables())+2 || got.HFilesPut != 0 {
			t.Errorf("%d HFiles imported, %d put instead: want one per table at least, none put", got.HFilesImported, got.HFilesPut)
		}
		got.Duration, got.HFilesImported, want.Duration = 0, 0, 0
		if got != want {
			t.Errorf("summary %+v, want the puts load's %+v", got, want)
		}
		if left := leftHFiles(t, cp); len(left) != 0 {
			t.Errorf("HFiles left behind after the import: %v", left)
		}
		checkLookups(t, ix, docs[:50])
	})

	t.Run("granted loader", func(t *testing.T) {
		if !s.Authorization {
			t.Skip("the secured HBase does not check permissions (SIMDEX_HBASE_AUTHORIZATION=0)")
		}
		// The tables' owner creates them and grants the loader's role to a
		// principal that is no superuser, which then loads them.
		owner := openSecureIndex(t, s)
		ns := owner.Store().(*hbasestore.Store).Config().Namespace
		const user = hbasetest.Grantee
		perms, err := schema.Schema{Namespace: ns}.WithDefaults().Grants(user, schema.RoleLoader, false)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		defer cancel()
		for _, p := range perms {
			if err := owner.Store().(*hbasestore.Store).Client().Grant(ctx, p); err != nil {
				t.Fatalf("grant %s: %v", p, err)
			}
		}
		cfg := secureStoreConfig(s, ns)
		cfg.CreateTables = false
		cfg.Kerberos = &hbase.Kerberos{Principal: hbasetest.Principal(user), Keytab: s.Path(hbasetest.GranteeKeytab), Krb5Conf: s.Krb5Conf()}
		var st *hbasestore.Store
		hbasetest.Eventually(t, "open as the loader", func() (err error) {
			st, err = hbasestore.Open(ctx, cfg)
			return err
		}, func(err error) bool { return errors.Is(err, hbase.ErrAccessDenied) })
		ix, err := kvindex.Open(ctx, st, kvindex.Config{RecipeVersion: fingerprint.RecipeVersion, BucketWidth: 24 * time.Hour, MaxCellBytes: 1024,
			Locker: st.Locker(), Bands: kvindex.BandsOff})
		if err != nil {
			_ = st.Close()
			t.Fatal(err)
		}
		defer ix.Close()
		lcfg := withCP(hfileConfig(dir, glob), filepath.Join(dir, "cp-granted"))
		lcfg.Import.FileMode = 0o666
		got, err := Run(bg, ix, lcfg)
		if err != nil {
			t.Fatalf("hfile load as a principal granted %v: %v", perms, err)
		}
		if d := diff(refDump, dump(t, ix)); d != "" {
			t.Errorf("HFile import by the granted loader differs from the puts load:\n%s", d)
		}
		if got.HFilesImported == 0 || got.HFilesPut != 0 {
			t.Errorf("%d HFiles imported, %d put instead: want imports only", got.HFilesImported, got.HFilesPut)
		}
	})

	// CleanupBulkLoad removed the staging directory of every token the
	// loads took (other tests' loads may be running: only new entries
	// count).
	for _, e := range stagingEntries(t, s) {
		if !slices.Contains(stagingBefore, e) {
			t.Errorf("HBase's staging directory keeps %s after the loads", e)
		}
	}
}
