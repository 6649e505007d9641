#!/usr/bin/env bash
# Starts (or stops) a secured standalone HBase on loopback: a local MIT
# Kerberos KDC with the principals and keytabs simdex's tests need, a CA with a
# server and a client certificate, and HBase (scripts/hbase/start.sh) with
# Kerberos (SASL GSSAPI, hbase.rpc.protection=privacy unless set) and HBase's native Netty
# TLS on its RPC ports. Its ZooKeeper (in the master's JVM) authenticates
# clients by SASL GSSAPI as zookeeper/localhost and, unless told otherwise,
# requires it (enforce.auth.enabled, schemes sasl): HBase's own servers and the
# Java peer log in to it with JAAS "Client" sections.
#
#   scripts/hbase/secure.sh start   prints the ZooKeeper address as its last line
#   scripts/hbase/secure.sh stop    stops HBase and the KDC
#
# Everything lives in SIMDEX_HBASE_SECURE_DIR, wiped on start (the KDC database,
# keytabs and certificates are throwaway); secure.env there names it for the
# tests (internal/hbasetest.Secure):
#   krb5.conf                 realm SIMDEX.TEST, KDC on 127.0.0.1, no DNS
#   hbase.keytab              hbase/localhost@SIMDEX.TEST (master and region server)
#   zookeeper.keytab          zookeeper/localhost@SIMDEX.TEST (ZooKeeper's JAAS Server)
#   jaas.conf                 HBase's JVM: ZooKeeper's Server and HBase's Client login
#   simdex.keytab             simdex@SIMDEX.TEST, the client
#   short.keytab              simdex-short@SIMDEX.TEST: tickets live SHORT_LIFE
#   expired.keytab            simdex-expired@SIMDEX.TEST: the principal has expired
#   stale.keytab              simdex-stale@SIMDEX.TEST: its key changed after export
#   reader.keytab             simdex-reader@SIMDEX.TEST: valid, but granted nothing
#                             (with authorization, HBase refuses it everything)
#   server.keytab             simdex-server@SIMDEX.TEST: not a superuser; with
#                             authorization it may do what a test grants it
#                             on that test's own tables
#   ca.pem, server.pem/-key.pem, client.pem/-key.pem   the CA and its certificates
#   client-conf/hbase-site.xml the Java peer's client configuration
#   client-conf/jaas.conf     the Java peer's ZooKeeper login (as simdex)
#
# MIT krb5-kdc (Debian's krb5-kdc, krb5-admin-server) is installed with apt-get
# when missing and this runs as root (or with password-less sudo), as
# scripts/test.sh does for chromium: the real KDC admins run, with kadmin.local
# to create principals, and no JVM of its own (Hadoop's MiniKdc would add one).
#
# Env:
#   SIMDEX_HBASE_SECURE_DIR    all state               (<repo>/.hbase/secure-data)
#   SIMDEX_HBASE_SECURE_STRICT 1: Kerberos and TLS required (no fallback to
#                              SIMPLE, no plaintext); 0: both optional, so one
#                              server answers plain, TLS and Kerberos clients
#                              alike (benchmarks)                           (1)
#   SIMDEX_HBASE_KDC_PORT      KDC port, TCP and UDP   (24088)
#   SIMDEX_HBASE_ZK_PORT, SIMDEX_HBASE_MASTER_PORT, SIMDEX_HBASE_RS_PORT
#                              as start.sh             (24181, 24000, 24020)
#   SIMDEX_HBASE_SHORT_LIFE    ticket lifetime of simdex-short, seconds (30)
#   SIMDEX_HBASE_RPC_PROTECTION hbase.rpc.protection of the servers and the peer:
#                              one or a comma-separated list of authentication,
#                              integrity, privacy (privacy)
#   SIMDEX_HBASE_AUTHORIZATION 1: HBase checks permissions (hbase.security.
#                              authorization with the AccessController), with
#                              simdex and simdex-short as superusers; 0: any
#                              authenticated user may do anything (1 when
#                              strict, else 0: plain clients of a non-strict
#                              server would be refused everything)
#   SIMDEX_HBASE_SECURE_TLS    1: TLS on the RPC ports as above; 0: Kerberos
#                              alone (HBase 2.5 has no native RPC TLS)
#                              (1, but 0 for SIMDEX_HBASE_VERSION 2.5.*)
#   SIMDEX_HBASE_ZK_SASL       ZooKeeper's SASL: required (clients must
#                              authenticate), optional (those with Kerberos do)
#                              or off (no SASL login: plain ZooKeeper, for
#                              TestSecureZooKeeperSASL's checks of one; the
#                              other secured tests' clients use SASL)
#                              (required when strict, else optional;
#                              optional where the ZooKeeper of
#                              SIMDEX_HBASE_VERSION is older than 3.7, which
#                              cannot enforce it)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export SIMDEX_HBASE_HOME="${SIMDEX_HBASE_HOME:-$repo/.hbase}"
dir="${SIMDEX_HBASE_SECURE_DIR:-$SIMDEX_HBASE_HOME/secure-data}"
strict="${SIMDEX_HBASE_SECURE_STRICT:-1}"
kdc_port="${SIMDEX_HBASE_KDC_PORT:-24088}"
export SIMDEX_HBASE_ZK_PORT="${SIMDEX_HBASE_ZK_PORT:-24181}"
export SIMDEX_HBASE_MASTER_PORT="${SIMDEX_HBASE_MASTER_PORT:-24000}"
export SIMDEX_HBASE_RS_PORT="${SIMDEX_HBASE_RS_PORT:-24020}"
short_life="${SIMDEX_HBASE_SHORT_LIFE:-30}"
protection="${SIMDEX_HBASE_RPC_PROTECTION:-privacy}"
if [ "$strict" = 1 ]; then zk_sasl_default=required; else zk_sasl_default=optional; fi
zk_sasl="${SIMDEX_HBASE_ZK_SASL:-$zk_sasl_default}"
authorization="${SIMDEX_HBASE_AUTHORIZATION:-$strict}"
case "$authorization" in
0 | 1) ;;
*) echo "secure.sh: SIMDEX_HBASE_AUTHORIZATION must be 0 or 1" >&2; exit 2 ;;
esac
if [ "$zk_sasl" = required ]; then
	# ZooKeeper enforces SASL (zookeeper.enforce.auth.*) from 3.7 on; an
	# older one (3.0.0-alpha-4 resolves 3.5.7) accepts anyone whatever it is
	# told, so the cluster is described as what it is: optional.
	"$here/install.sh" >&2
	case "${SIMDEX_HBASE_VERSION:-2.6.4}" in 2.6.4) cp_file="$SIMDEX_HBASE_HOME/cp.txt" ;; *) cp_file="$SIMDEX_HBASE_HOME/cp-$SIMDEX_HBASE_VERSION.txt" ;; esac
	if tr ':' '\n' <"$cp_file" | grep -Eq '/zookeeper-3\.[0-6]\.[0-9]+\.jar$'; then
		echo "secure.sh: this HBase's ZooKeeper predates enforced SASL (3.7): its SASL is optional" >&2
		zk_sasl=optional
	fi
fi
case "$zk_sasl" in
required | optional | off) ;;
*) echo "secure.sh: SIMDEX_HBASE_ZK_SASL must be required, optional or off" >&2; exit 2 ;;
esac
# start.sh checks SIMDEX_HBASE_VERSION (version.sh); 2.5 has no RPC TLS.
case "${SIMDEX_HBASE_VERSION:-2.6.4}" in 2.5.*) tls_default=0 ;; *) tls_default=1 ;; esac
with_tls="${SIMDEX_HBASE_SECURE_TLS:-$tls_default}"
case "$with_tls" in
0 | 1) ;;
*) echo "secure.sh: SIMDEX_HBASE_SECURE_TLS must be 0 or 1" >&2; exit 2 ;;
esac
realm=SIMDEX.TEST
pass=simdex-test # keystore passwords of throwaway test stores

stop_kdc() {
	if [ -s "$dir/kdc.pid" ] && kill -0 "$(cat "$dir/kdc.pid")" 2>/dev/null; then
		kill "$(cat "$dir/kdc.pid")" || true
	fi
	rm -f "$dir/kdc.pid"
}

case "${1:-}" in
stop)
	SIMDEX_HBASE_DATA="$dir/hbase" SIMDEX_HBASE_STOP_KILL=1 "$here/stop.sh" || true
	stop_kdc
	exit 0
	;;
start) ;;
*)
	echo "usage: secure.sh start|stop" >&2
	exit 2
	;;
esac

if ! command -v krb5kdc >/dev/null 2>&1 || ! command -v kadmin.local >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
	elif sudo -n true 2>/dev/null; then
		apt_get=(sudo -n env DEBIAN_FRONTEND=noninteractive apt-get)
	else
		echo "secure.sh: krb5kdc missing and no root to install krb5-kdc" >&2
		exit 1
	fi
	echo "secure.sh: installing Debian's krb5-kdc, krb5-admin-server and krb5-user" >&2
	{ "${apt_get[@]}" update -qq && "${apt_get[@]}" install -y -qq krb5-kdc krb5-admin-server krb5-user; } >/dev/null
fi
for tool in openssl keytool krb5kdc kadmin.local kdb5_util; do
	command -v "$tool" >/dev/null 2>&1 || { echo "secure.sh: $tool not found" >&2; exit 1; }
done

# A previous run's HBase and KDC on this directory go first: the state is wiped.
SIMDEX_HBASE_DATA="$dir/hbase" SIMDEX_HBASE_STOP_KILL=1 "$here/stop.sh" 2>/dev/null || true
stop_kdc
rm -rf "$dir"
mkdir -p "$dir/kdc" "$dir/client-conf"
dir="$(cd "$dir" && pwd)"

# --- Kerberos --------------------------------------------------------------
# rdns and dns_canonicalize_hostname off: service principals are
# hbase/localhost whatever the resolver says about 127.0.0.1. TCP only (one
# port to choose, and Java's and gokrb5's defaults agree on it). A small
# clockskew lets a test see a short ticket really expire.
cat >"$dir/krb5.conf" <<EOF
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  clockskew = 10
  default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  renew_lifetime = 1d

[realms]
  $realm = {
    kdc = 127.0.0.1:$kdc_port
  }

[domain_realm]
  localhost = $realm
EOF
cat >"$dir/kdc/kdc.conf" <<EOF
[kdcdefaults]
  kdc_ports = $kdc_port
  kdc_tcp_ports = $kdc_port

[realms]
  $realm = {
    database_name = $dir/kdc/principal
    key_stash_file = $dir/kdc/stash
    acl_file = $dir/kdc/kadm5.acl
    max_life = 1d
    max_renewable_life = 7d
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }

[logging]
  kdc = FILE:$dir/kdc/kdc.log
EOF
: >"$dir/kdc/kadm5.acl"
export KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc/kdc.conf"
kdb5_util create -s -r "$realm" -P "$(head -c 24 /dev/urandom | base64)" >/dev/null 2>&1
kadm() { kadmin.local -r "$realm" -q "$1" >/dev/null; }
kadm "addprinc -randkey hbase/localhost@$realm"
kadm "ktadd -k $dir/hbase.keytab hbase/localhost@$realm"
kadm "addprinc -randkey zookeeper/localhost@$realm"
kadm "ktadd -k $dir/zookeeper.keytab zookeeper/localhost@$realm"
kadm "addprinc -randkey simdex@$realm"
kadm "ktadd -k $dir/simdex.keytab simdex@$realm"
kadm "addprinc -randkey -maxlife \"$short_life seconds\" -maxrenewlife \"1 day\" simdex-short@$realm"
kadm "ktadd -k $dir/short.keytab simdex-short@$realm"
kadm "addprinc -randkey simdex-expired@$realm"
kadm "ktadd -k $dir/expired.keytab simdex-expired@$realm"
kadm "modprinc -expire \"2000-01-01 00:00:00 UTC\" simdex-expired@$realm"
kadm "addprinc -randkey simdex-stale@$realm"
kadm "ktadd -k $dir/stale.keytab simdex-stale@$realm"
kadm "cpw -randkey simdex-stale@$realm"
kadm "addprinc -randkey simdex-reader@$realm"
kadm "ktadd -k $dir/reader.keytab simdex-reader@$realm"
kadm "addprinc -randkey simdex-server@$realm"
kadm "ktadd -k $dir/server.keytab simdex-server@$realm"
chmod 600 "$dir"/*.keytab
setsid krb5kdc -n -P "$dir/kdc.pid" >"$dir/kdc/stdout.log" 2>&1 </dev/null &
echo $! >"$dir/kdc.pid"
for _ in $(seq 1 50); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$kdc_port") 2>/dev/null; then break; fi
	sleep 0.1
done

# --- TLS -------------------------------------------------------------------
# The server certificate names localhost and 127.0.0.1 (clients dial what
# ZooKeeper and hbase:meta say, localhost here); HBase reads PKCS#12 stores.
tls="$dir/tls"
mkdir -p "$tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=simdex test CA" \
	-keyout "$tls/ca-key.pem" -out "$dir/ca.pem" 2>/dev/null
for who in server client; do
	openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
		-keyout "$dir/$who-key.pem" -out "$tls/$who.csr" 2>/dev/null
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >"$tls/$who.ext"
	openssl x509 -req -in "$tls/$who.csr" -CA "$dir/ca.pem" -CAkey "$tls/ca-key.pem" -CAcreateserial \
		-days 30 -extfile "$tls/$who.ext" -out "$dir/$who.pem" 2>/dev/null
done
openssl pkcs12 -export -in "$dir/server.pem" -inkey "$dir/server-key.pem" -name server \
	-passout "pass:$pass" -out "$tls/server.p12"
openssl pkcs12 -export -in "$dir/client.pem" -inkey "$dir/client-key.pem" -name client \
	-passout "pass:$pass" -out "$tls/client.p12"
keytool -importcert -noprompt -alias ca -file "$dir/ca.pem" -storetype PKCS12 \
	-keystore "$tls/truststore.p12" -storepass "$pass" >/dev/null 2>&1

# --- HBase -----------------------------------------------------------------
if [ "$strict" = 1 ]; then fallback=false plaintext=false; else fallback=true plaintext=true; fi
prop() { printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"; }
common_props() { # both the servers' and the Java peer's
	prop hadoop.security.authentication kerberos
	prop hbase.security.authentication kerberos
	prop hbase.master.kerberos.principal "hbase/_HOST@$realm"
	prop hbase.regionserver.kerberos.principal "hbase/_HOST@$realm"
	prop hbase.rpc.protection "$protection"
	if [ "$with_tls" = 1 ]; then
		prop hbase.client.netty.tls.enabled true
		prop hbase.rpc.tls.truststore.location "$tls/truststore.p12"
		prop hbase.rpc.tls.truststore.password "$pass"
		prop hbase.rpc.tls.truststore.type PKCS12
	fi
}
{
	common_props
	prop hbase.master.keytab.file "$dir/hbase.keytab"
	prop hbase.regionserver.keytab.file "$dir/hbase.keytab"
	prop hbase.ipc.server.fallback-to-simple-auth-allowed "$fallback"
	if [ "$with_tls" = 1 ]; then
		prop hbase.server.netty.tls.enabled true
		prop hbase.server.netty.tls.supportplaintext "$plaintext"
		prop hbase.server.netty.tls.client.auth.mode WANT
		prop hbase.server.netty.tls.verify.client.hostname false
		prop hbase.rpc.tls.keystore.location "$tls/server.p12"
		prop hbase.rpc.tls.keystore.password "$pass"
		prop hbase.rpc.tls.keystore.type PKCS12
	fi
	if [ "$authorization" = 1 ]; then
		# The AccessController on the master, the regions and the region
		# servers, as a secured production cluster runs it: a table's
		# creator owns it, anyone else needs grants (hbase:acl), superusers
		# need none. The tests' main principals create namespaces, which
		# takes global ADMIN, so they are superusers; simdex-reader and
		# simdex-server are not.
		access=org.apache.hadoop.hbase.security.access.AccessController
		prop hbase.security.authorization true
		prop hbase.coprocessor.master.classes "$access"
		prop hbase.coprocessor.region.classes "$access"
		prop hbase.coprocessor.regionserver.classes "$access"
		prop hbase.superuser simdex,simdex-short
	fi
} >"$dir/site-extra.xml"
{
	echo '<?xml version="1.0"?>'
	echo '<!-- Written by scripts/hbase/secure.sh: the Java peer on the secured HBase. -->'
	echo '<configuration>'
	common_props
	prop hbase.client.keytab.file "$dir/simdex.keytab"
	prop hbase.client.keytab.principal "simdex@$realm"
	prop hbase.rpc.tls.keystore.location "$tls/client.p12"
	prop hbase.rpc.tls.keystore.password "$pass"
	prop hbase.rpc.tls.keystore.type PKCS12
	echo '</configuration>'
} >"$dir/client-conf/hbase-site.xml"

# Hadoop's UserGroupInformation reads hadoop.security.authentication from
# core-site.xml only, not hbase-site.xml: without it nobody logs in.
mkdir -p "$dir/hbase/conf"
for d in "$dir/hbase/conf" "$dir/client-conf"; do
	{
		echo '<?xml version="1.0"?>'
		echo '<configuration>'
		prop hadoop.security.authentication kerberos
		echo '</configuration>'
	} >"$d/core-site.xml"
done

krb_opts="-Djava.security.krb5.conf=$dir/krb5.conf -Dsun.security.krb5.disableReferrals=true"

# --- ZooKeeper's SASL --------------------------------------------------------
# Standalone HBase runs ZooKeeper in the master's JVM, configured by system
# properties: the SASL provider, the JAAS file whose Server section is
# ZooKeeper's login and whose Client section is HBase's own as ZooKeeper's
# client, and the principal's short name (hbase) as the ACL identity, as the
# ACLs HBase puts on its znodes (sasl:hbase) expect. Java clients name the
# server zookeeper/localhost whatever 127.0.0.1 resolves to.
jaas_entry() { # section, keytab, principal
	printf '%s {\n  com.sun.security.auth.module.Krb5LoginModule required\n' "$1"
	printf '  useKeyTab=true\n  keyTab="%s"\n  storeKey=true\n  useTicketCache=false\n  principal="%s";\n};\n' "$2" "$3"
}
zk_client_opts="-Dzookeeper.server.principal=zookeeper/localhost@$realm"
zk_server_opts=""
peer_zk_opts=""
if [ "$zk_sasl" != off ]; then
	{
		jaas_entry Server "$dir/zookeeper.keytab" "zookeeper/localhost@$realm"
		jaas_entry Client "$dir/hbase.keytab" "hbase/localhost@$realm"
	} >"$dir/jaas.conf"
	jaas_entry Client "$dir/simdex.keytab" "simdex@$realm" >"$dir/client-conf/jaas.conf"
	zk_server_opts="-Djava.security.auth.login.config=$dir/jaas.conf $zk_client_opts"
	zk_server_opts+=" -Dzookeeper.authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
	zk_server_opts+=" -Dzookeeper.kerberos.removeHostFromPrincipal=true -Dzookeeper.kerberos.removeRealmFromPrincipal=true"
	if [ "$zk_sasl" = required ]; then
		zk_server_opts+=" -Dzookeeper.enforce.auth.enabled=true -Dzookeeper.enforce.auth.schemes=sasl"
	fi
	peer_zk_opts="-Djava.security.auth.login.config=$dir/client-conf/jaas.conf $zk_client_opts"
fi
export SIMDEX_HBASE_DATA="$dir/hbase"
export SIMDEX_HBASE_SITE_EXTRA="$dir/site-extra.xml"
export SIMDEX_HBASE_JAVA_OPTS="${SIMDEX_HBASE_JAVA_OPTS:-} $krb_opts $zk_server_opts"
export SIMDEX_HBASE_PEER_CONF="$dir/client-conf"
export SIMDEX_HBASE_PEER_JAVA_OPTS="$krb_opts $peer_zk_opts"
export SIMDEX_HBASE_HEAP="${SIMDEX_HBASE_HEAP:-768m}"
if ! zk="$("$here/start.sh" | tail -n 1)"; then
	echo "secure.sh: HBase did not start; KDC log:" >&2
	tail -n 20 "$dir/kdc/kdc.log" >&2 2>/dev/null || true
	exit 1
fi
cat >"$dir/secure.env" <<EOF
# Written by scripts/hbase/secure.sh start: the secured HBase for the tests.
export SIMDEX_SECURE_ZK=$zk
export SIMDEX_SECURE_DIR=$dir
export SIMDEX_SECURE_STRICT=$strict
export SIMDEX_SECURE_SHORT_LIFE=$short_life
export SIMDEX_SECURE_PROTECTION=$protection
export SIMDEX_SECURE_ZK_SASL=$zk_sasl
export SIMDEX_SECURE_AUTHORIZATION=$authorization
export SIMDEX_SECURE_TLS=$with_tls
export SIMDEX_SECURE_HBASE_VERSION=${SIMDEX_HBASE_VERSION:-2.6.4}
EOF
echo "$zk"
