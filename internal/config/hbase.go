package config

import (
	"flag"
	"fmt"
	"strings"

	"github.com/simdex/simdex/hbase"
	"github.com/simdex/simdex/storage/hbasestore"
)

// DefaultHBaseNamespace is the namespace of the simdex tables unless
// --hbase-namespace says otherwise.
const DefaultHBaseNamespace = "simdex"

// HBase is the connection to HBase that the server, the bulk loader and
// simdexctl share: the same flags, defaults, checks and store
// configuration in each. Commands embed it in their Config, so its fields
// and methods read as the Config's own (cfg.HBaseZK, cfg.HBaseQuorum());
// the methods are named for HBase to read right there.
type HBase struct {
	// HBaseZK is the ZooKeeper quorum, host:port[,host:port...] (--hbase-zk).
	HBaseZK string
	// HBaseNamespace holds the simdex tables (--hbase-namespace).
	HBaseNamespace string
	// HBaseCreateTables creates missing tables with the default schema
	// (--hbase-create-tables, where the command declares it); without it
	// a missing table is refused, naming `simdexctl schema create`.
	HBaseCreateTables bool
	// HBaseTLS and the HBaseTLS* files: TLS on the RPC connections
	// (--hbase-tls, --hbase-tls-ca, --hbase-tls-cert, --hbase-tls-key,
	// --hbase-tls-server-name).
	HBaseTLS           bool
	HBaseTLSCA         string
	HBaseTLSCert       string
	HBaseTLSKey        string
	HBaseTLSServerName string
	// HBaseKerberos*: SASL GSSAPI (--hbase-kerberos-principal with
	// --hbase-kerberos-keytab, or --hbase-kerberos-ccache; --hbase-krb5-conf,
	// --hbase-kerberos-service, --hbase-rpc-protection). Kerberos is on
	// when a keytab or ticket cache is given. With Kerberos the client
	// authenticates to ZooKeeper by SASL GSSAPI too, unless HBaseZKSASL
	// is false (--hbase-zk-sasl), to HBaseZKKerberosService
	// (--hbase-zk-kerberos-service).
	HBaseKerberosPrincipal string
	HBaseKerberosKeytab    string
	HBaseKerberosCCache    string
	HBaseKrb5Conf          string
	HBaseKerberosService   string
	HBaseRPCProtection     string
	HBaseZKSASL            bool
	HBaseZKKerberosService string
}

// DefaultHBase is the HBase configuration of a command line without the
// HBase flags.
func DefaultHBase() HBase {
	return HBase{HBaseNamespace: DefaultHBaseNamespace, HBaseKerberosService: hbase.DefaultServicePrincipal,
		HBaseZKSASL: true, HBaseZKKerberosService: hbase.DefaultZooKeeperPrincipal}
}

// HBaseSecurityFlags names the TLS and Kerberos flags HBaseFlags declares:
// store settings, which every command takes from its flags, SIMDEX_*
// variables and config file alike.
var HBaseSecurityFlags = []string{
	"hbase-tls", "hbase-tls-ca", "hbase-tls-cert", "hbase-tls-key", "hbase-tls-server-name",
	"hbase-kerberos-principal", "hbase-kerberos-keytab", "hbase-kerberos-ccache", "hbase-krb5-conf",
	"hbase-kerberos-service", "hbase-rpc-protection", "hbase-zk-sasl", "hbase-zk-kerberos-service",
}

// HBaseFlags declares --hbase-zk and --hbase-namespace on fs, bound to h, and
// --hbase-create-tables when refusal (what a missing table does without
// it, e.g. "else refuse to start") is not empty. Every help text starts
// with prefix (e.g. "with --store hbase: ").
func (h *HBase) HBaseFlags(fs *flag.FlagSet, prefix, refusal string) {
	fs.StringVar(&h.HBaseZK, "hbase-zk", h.HBaseZK, prefix+"ZooKeeper quorum of HBase, host:port[,host:port...]")
	fs.StringVar(&h.HBaseNamespace, "hbase-namespace", h.HBaseNamespace, prefix+"namespace of the simdex tables")
	if refusal != "" {
		fs.BoolVar(&h.HBaseCreateTables, "hbase-create-tables", h.HBaseCreateTables, prefix+"create missing tables with the default schema ("+refusal+")")
	}
	fs.BoolVar(&h.HBaseTLS, "hbase-tls", h.HBaseTLS, prefix+"TLS on HBase's RPC connections (hbase.server.netty.tls.enabled)")
	fs.StringVar(&h.HBaseTLSCA, "hbase-tls-ca", h.HBaseTLSCA, prefix+"PEM file of the CAs that verify HBase's certificates (default: the system's)")
	fs.StringVar(&h.HBaseTLSCert, "hbase-tls-cert", h.HBaseTLSCert, prefix+"PEM client certificate, for a cluster that wants one (with --hbase-tls-key)")
	fs.StringVar(&h.HBaseTLSKey, "hbase-tls-key", h.HBaseTLSKey, prefix+"PEM key of --hbase-tls-cert")
	fs.StringVar(&h.HBaseTLSServerName, "hbase-tls-server-name", h.HBaseTLSServerName, prefix+"name the servers' certificates carry (default: each server's host)")
	fs.StringVar(&h.HBaseKerberosPrincipal, "hbase-kerberos-principal", h.HBaseKerberosPrincipal, prefix+"Kerberos principal user@REALM of the client (with --hbase-kerberos-keytab)")
	fs.StringVar(&h.HBaseKerberosKeytab, "hbase-kerberos-keytab", h.HBaseKerberosKeytab, prefix+"keytab of --hbase-kerberos-principal: Kerberos (SASL GSSAPI) to HBase")
	fs.StringVar(&h.HBaseKerberosCCache, "hbase-kerberos-ccache", h.HBaseKerberosCCache, prefix+"Kerberos ticket cache (kinit's) instead of a keytab")
	fs.StringVar(&h.HBaseKrb5Conf, "hbase-krb5-conf", h.HBaseKrb5Conf, prefix+"krb5.conf naming the realm's KDCs (default $KRB5_CONFIG, else /etc/krb5.conf)")
	fs.StringVar(&h.HBaseKerberosService, "hbase-kerberos-service", h.HBaseKerberosService, prefix+"HBase's service principal, _HOST for each server's host (hbase.regionserver.kerberos.principal)")
	fs.StringVar(&h.HBaseRPCProtection, "hbase-rpc-protection", h.HBaseRPCProtection, prefix+"weakest Kerberos protection accepted: authentication, integrity or privacy (default: what the cluster asks for)")
	fs.BoolVar(&h.HBaseZKSASL, "hbase-zk-sasl", h.HBaseZKSASL, prefix+"with Kerberos, authenticate to ZooKeeper by SASL GSSAPI too (false: read it unauthenticated, for a ZooKeeper without SASL)")
	fs.StringVar(&h.HBaseZKKerberosService, "hbase-zk-kerberos-service", h.HBaseZKKerberosService, prefix+"ZooKeeper's service principal, _HOST for each quorum host (zookeeper.sasl.client.username/_HOST)")
}

// HBaseQuorum is HBaseZK split at commas, blanks trimmed, empty items
// dropped.
func (h HBase) HBaseQuorum() []string {
	var out []string
	for _, a := range strings.Split(h.HBaseZK, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// HBaseStoreConfig is the HBase store's configuration of h (the quorum, the
// namespace, CreateTables); the command sets the rest.
func (h HBase) HBaseStoreConfig() hbasestore.Config {
	return hbasestore.Config{ZooKeeper: h.HBaseQuorum(), Namespace: h.HBaseNamespace, CreateTables: h.HBaseCreateTables,
		TLS: h.HBaseTLSFiles(), Kerberos: h.HBaseKerberos()}
}

// HBaseTLSFiles is the TLS configuration of h.
func (h HBase) HBaseTLSFiles() hbase.TLSFiles {
	return hbase.TLSFiles{Enabled: h.HBaseTLS, CA: h.HBaseTLSCA, Cert: h.HBaseTLSCert, Key: h.HBaseTLSKey, ServerName: h.HBaseTLSServerName}
}

// HBaseKerberos is the Kerberos configuration of h: nil without a keytab
// or ticket cache. An unknown --hbase-rpc-protection is left for
// ValidateHBase to report.
func (h HBase) HBaseKerberos() *hbase.Kerberos {
	if h.HBaseKerberosKeytab == "" && h.HBaseKerberosCCache == "" {
		return nil
	}
	prot, _ := hbase.ParseProtection(h.HBaseRPCProtection)
	return &hbase.Kerberos{Principal: h.HBaseKerberosPrincipal, Keytab: h.HBaseKerberosKeytab, CCache: h.HBaseKerberosCCache,
		Krb5Conf: h.HBaseKrb5Conf, ServicePrincipal: h.HBaseKerberosService, MinProtection: prot,
		ZooKeeperPlain: !h.HBaseZKSASL, ZooKeeperPrincipal: h.HBaseZKKerberosService}
}

// HBaseClientConfig is the HBase client configuration of h: the quorum
// and the security settings (TLS files loaded).
func (h HBase) HBaseClientConfig() (hbase.Config, error) {
	tc, err := h.HBaseTLSFiles().Config()
	if err != nil {
		return hbase.Config{}, err
	}
	return hbase.Config{ZooKeeper: h.HBaseQuorum(), TLS: tc, Kerberos: h.HBaseKerberos()}, nil
}

// ValidateHBase reports what is wrong with h for user, what needs HBase (e.g.
// "--store hbase"): no quorum, an address without a port, a bad
// namespace.
func (h HBase) ValidateHBase(user string) error {
	if len(h.HBaseQuorum()) == 0 {
		return fmt.Errorf("%s needs --hbase-zk (%s): the ZooKeeper quorum, host:port[,host:port...]", user, EnvName("hbase-zk"))
	}
	if _, err := hbase.ParseProtection(h.HBaseRPCProtection); err != nil {
		return fmt.Errorf("--hbase-rpc-protection (%s): %w", EnvName("hbase-rpc-protection"), err)
	}
	if h.HBaseKerberos() == nil && (h.HBaseKerberosPrincipal != "" || h.HBaseRPCProtection != "") {
		return fmt.Errorf("%s: --hbase-kerberos-principal and --hbase-rpc-protection need --hbase-kerberos-keytab or --hbase-kerberos-ccache", user)
	}
	return h.HBaseStoreConfig().WithDefaults().Validate()
}
