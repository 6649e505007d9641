package hbasestore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/internal/hbasetest"
	"github.com/simdex/simdex/storage"
	"github.com/simdex/simdex/storage/hbasestore"
	"github.com/simdex/simdex/storage/storetest"
)

// secureConfig is a store configuration on the secured HBase: Kerberos as
// simdex (privacy, as the cluster asks) over TLS with the client
// certificate.
func secureConfig(s *hbasetest.SecureCluster, ns string) hbasestore.Config {
	return hbasestore.Config{
		ZooKeeper: []string{s.ZK}, Namespace: ns,
		TLS: hbase.TLSFiles{Enabled: true, CA: s.Path("ca.pem"), Cert: s.Path("client.pem"), Key: s.Path("client-key.pem")},
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal("simdex"), Keytab: s.Path("simdex.keytab"), Krb5Conf: s.Krb5Conf(),
			MinProtection: hbase.ProtectPrivacy},
	}
}

// TestSecureContract runs the store contract suite on the secured HBase.
func TestSecureContract(t *testing.T) {
	s := hbasetest.Secure(t)
	storetest.Run(t, func(t *testing.T) storage.Store {
		ns := fmt.Sprintf("s%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, nsSeq.Add(1))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cfg := secureConfig(s, ns)
		cfg.CreateTables, cfg.Compression = true, testCompression
		st, err := hbasestore.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			st.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			d, err := hbasestore.Open(ctx, secureConfig(s, ns))
			if err != nil {
				t.Logf("drop %s: %v", ns, err)
				return
			}
			defer d.Close()
			if err := hbasestore.Drop(ctx, d.Client(), ns); err != nil {
				t.Logf("drop %s: %v", ns, err)
			}
		})
		return st
	})
}
