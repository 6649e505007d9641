package hbase

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// ErrSecurity marks a connection that failed its security handshake or a
// security mismatch: a TLS certificate that does not verify, a KDC that
// refuses the principal (unknown, expired, a stale keytab), a server that
// rejects the ticket, a cluster that requires Kerberos or TLS the client was
// not given (or the reverse). It is not retryable: the configuration of
// the client or the cluster has to change.
var ErrSecurity = errors.New("hbase: security")

// Protection is a SASL quality of protection, HBase's hbase.rpc.protection.
type Protection int

// The qualities of protection, weakest first.
const (
	// ProtectAuthentication authenticates the connection only.
	ProtectAuthentication Protection = iota + 1
	// ProtectIntegrity also checksums every message (GSSAPI wrap).
	ProtectIntegrity
	// ProtectPrivacy also encrypts every message (GSSAPI sealed wrap).
	ProtectPrivacy
)

// String is HBase's name of p.
func (p Protection) String() string {
	switch p {
	case ProtectAuthentication:
		return "authentication"
	case ProtectIntegrity:
		return "integrity"
	case ProtectPrivacy:
		return "privacy"
	}
	return fmt.Sprintf("Protection(%d)", int(p))
}

// ParseProtection parses HBase's names: authentication, integrity, privacy
// ("" is authentication, the weakest).
func ParseProtection(s string) (Protection, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "authentication":
		return ProtectAuthentication, nil
	case "integrity":
		return ProtectIntegrity, nil
	case "privacy":
		return ProtectPrivacy, nil
	}
	return 0, fmt.Errorf("%w: protection %q: want authentication, integrity or privacy", ErrInvalidArgument, s)
}

// DefaultServicePrincipal is Kerberos.ServicePrincipal's default, HBase's
// usual hbase/_HOST (_HOST: the server's host name as HBase names it).
const DefaultServicePrincipal = "hbase/_HOST"

// DefaultZooKeeperPrincipal is Kerberos.ZooKeeperPrincipal's default,
// ZooKeeper's usual zookeeper/_HOST (the service part is Java's
// zookeeper.sasl.client.username).
const DefaultZooKeeperPrincipal = "zookeeper/_HOST"

// Kerberos configures SASL GSSAPI authentication to the masters and region
// servers, and to ZooKeeper. Either Keytab (with Principal) or CCache is
// required.
type Kerberos struct {
	// Principal is the client, user[/instance]@REALM.
	Principal string
	// Keytab holds Principal's keys. The client logs in with it and logs
	// in again before its ticket expires, so it runs for ever.
	Keytab string
	// CCache is a ticket cache (kinit's), used when Keytab is empty. Its
	// ticket is renewed while renewable; after that the client fails with
	// ErrSecurity until the cache is refreshed and the client recreated.
	CCache string
	// Krb5Conf is the krb5.conf naming the realm's KDCs (default
	// $KRB5_CONFIG, else /etc/krb5.conf).
	Krb5Conf string
	// ServicePrincipal is the servers' principal, _HOST standing for each
	// server's host name (default DefaultServicePrincipal; a realm, if
	// given, must be the client's or one krb5.conf maps the host to).
	ServicePrincipal string
	// MinProtection is the weakest quality of protection the client
	// accepts; it takes the strongest the server offers (default
	// ProtectAuthentication: whatever the cluster asks for).
	MinProtection Protection
	// MaxProtection is the strongest it takes, for a cluster that offers
	// several (hbase.rpc.protection listing more than one): integrity
	// costs less CPU than privacy (default ProtectPrivacy).
	MaxProtection Protection
	// ZooKeeperPlain reads ZooKeeper without authenticating. By default
	// the client authenticates to ZooKeeper by SASL GSSAPI as well, which
	// a ZooKeeper enforcing authentication requires
	// (zookeeper.sessionRequireClientSASLAuth, or enforce.auth.enabled
	// with enforce.auth.schemes=sasl) and which a ZooKeeper with no SASL
	// login of its own (no JAAS "Server" section) cannot answer.
	ZooKeeperPlain bool
	// ZooKeeperPrincipal is ZooKeeper's principal, _HOST standing for
	// each quorum member's host name; a quorum member given as an IP
	// address is named by its reverse lookup, as ZooKeeper's Java client
	// does (default DefaultZooKeeperPrincipal).
	ZooKeeperPrincipal string
}

// withDefaults fills the defaults of k.
func (k Kerberos) withDefaults() Kerberos {
	if k.Krb5Conf == "" {
		k.Krb5Conf = os.Getenv("KRB5_CONFIG")
		if k.Krb5Conf == "" {
			k.Krb5Conf = "/etc/krb5.conf"
		}
	}
	if k.ServicePrincipal == "" {
		k.ServicePrincipal = DefaultServicePrincipal
	}
	if k.ZooKeeperPrincipal == "" {
		k.ZooKeeperPrincipal = DefaultZooKeeperPrincipal
	}
	if k.MinProtection == 0 {
		k.MinProtection = ProtectAuthentication
	}
	if k.MaxProtection == 0 {
		k.MaxProtection = ProtectPrivacy
	}
	return k
}

// validate reports what is missing or inconsistent in k (after defaults).
func (k Kerberos) validate() error {
	switch {
	case k.Keytab == "" && k.CCache == "":
		return fmt.Errorf("%w: Kerberos needs a keytab (with its principal) or a ticket cache", ErrInvalidArgument)
	case k.Keytab != "" && !strings.Contains(k.Principal, "@"):
		return fmt.Errorf("%w: Kerberos principal %q: want user@REALM", ErrInvalidArgument, k.Principal)
	case k.MinProtection < ProtectAuthentication || k.MaxProtection > ProtectPrivacy || k.MinProtection > k.MaxProtection:
		return fmt.Errorf("%w: Kerberos protection between %v and %v", ErrInvalidArgument, k.MinProtection, k.MaxProtection)
	case strings.Count(strings.SplitN(k.ServicePrincipal, "@", 2)[0], "/") != 1:
		return fmt.Errorf("%w: service principal %q: want service/host[@REALM]", ErrInvalidArgument, k.ServicePrincipal)
	case strings.Count(strings.SplitN(k.ZooKeeperPrincipal, "@", 2)[0], "/") != 1:
		return fmt.Errorf("%w: ZooKeeper principal %q: want service/host[@REALM]", ErrInvalidArgument, k.ZooKeeperPrincipal)
	}
	return nil
}

// kerberosAuth is a logged-in Kerberos client: it holds the TGT (gokrb5
// renews it before it expires, in a goroutine that destroy stops) and the
// service tickets.
type kerberosAuth struct {
	cfg Kerberos
	cl  *krbclient.Client

	loginMu  sync.Mutex // guards loggedIn
	loggedIn bool
}

// newKerberosAuth reads k's files (krb5.conf, keytab or ticket cache); it
// does not contact the KDC, which the first connection does.
func newKerberosAuth(k Kerberos) (*kerberosAuth, error) {
	conf, err := krbconfig.Load(k.Krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("%w: krb5.conf %s: %w", ErrSecurity, k.Krb5Conf, err)
	}
	if k.Keytab != "" {
		kt, err := keytab.Load(k.Keytab)
		if err != nil {
			return nil, fmt.Errorf("%w: keytab %s: %w", ErrSecurity, k.Keytab, err)
		}
		user, realm, _ := strings.Cut(k.Principal, "@")
		cl := krbclient.NewWithKeytab(user, realm, kt, conf, krbclient.DisablePAFXFAST(true))
		return &kerberosAuth{cfg: k, cl: cl}, nil
	}
	cc, err := credentials.LoadCCache(k.CCache)
	if err != nil {
		return nil, fmt.Errorf("%w: ticket cache %s: %w", ErrSecurity, k.CCache, err)
	}
	cl, err := krbclient.NewFromCCache(cc, conf, krbclient.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("%w: ticket cache %s: %w", ErrSecurity, k.CCache, err)
	}
	return &kerberosAuth{cfg: k, cl: cl, loggedIn: true}, nil
}

// principal is the client's principal name, user@REALM: the effective user
// HBase expects of a Kerberos connection (any other would be a proxy user).
func (a *kerberosAuth) principal() string {
	return a.cl.Credentials.CName().PrincipalNameString() + "@" + a.cl.Credentials.Realm()
}

// login gets the first TGT (a keytab client logs in once; gokrb5 renews
// or logs in again before each TGT expires).
func (a *kerberosAuth) login() error {
	a.loginMu.Lock()
	defer a.loginMu.Unlock()
	if a.loggedIn {
		return nil
	}
	if err := a.cl.Login(); err != nil {
		hint := ""
		if strings.Contains(err.Error(), "integrity verification failed") {
			// The AS-REP is encrypted with the KDC's current key.
			hint = " (the keytab's key is not the KDC's: was the key changed after the keytab was exported?)"
		}
		return fmt.Errorf("%w: Kerberos login of %s with keytab %s%s: %w", ErrSecurity, a.cfg.Principal, a.cfg.Keytab, hint, err)
	}
	a.loggedIn = true
	return nil
}

// servicePrincipal is template (service/_HOST[@REALM]) for the server on
// host, without the realm: the name gokrb5 asks the KDC for.
func (a *kerberosAuth) servicePrincipal(template, host string) string {
	spn, _, _ := strings.Cut(template, "@")
	return strings.ReplaceAll(spn, "_HOST", strings.ToLower(host))
}

// serviceTicket returns a ticket for the server on host whose principal is
// template (cached until it expires).
func (a *kerberosAuth) serviceTicket(template, host string) (string, messages.Ticket, types.EncryptionKey, error) {
	if err := a.login(); err != nil {
		return "", messages.Ticket{}, types.EncryptionKey{}, err
	}
	spn := a.servicePrincipal(template, host)
	tkt, key, err := a.cl.GetServiceTicket(spn)
	if err != nil {
		return spn, tkt, key, fmt.Errorf("%w: service ticket for %s as %s: %w", ErrSecurity, spn, a.principal(), err)
	}
	return spn, tkt, key, nil
}

// destroy stops gokrb5's renewal goroutines and forgets the tickets.
func (a *kerberosAuth) destroy() { a.cl.Destroy() }
