package hbasestore_test

import (
	"testing"

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
		TLS: hbase.TLSFiles{Enabled: s.TLS, CA: s.TLSPath("ca.pem"), Cert: s.TLSPath("client.pem"), Key: s.TLSPath("client-key.pem")},
		Kerberos: &hbase.Kerberos{Principal: hbasetest.Principal("simdex"), Keytab: s.Path("simdex.keytab"), Krb5Conf: s.Krb5Conf(),
			MinProtection: hbase.ProtectPrivacy},
	}
}

// TestSecureContract runs the store contract suite on the secured HBase.
func TestSecureContract(t *testing.T) {
	s := hbasetest.Secure(t)
	storetest.Run(t, func(t *testing.T) storage.Store {
		return openFreshWith(t, "s", func(ns string) hbasestore.Config { return secureConfig(s, ns) })
	})
}
