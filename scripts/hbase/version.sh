# shellcheck shell=bash
# Sourced by the scripts of scripts/hbase/ (install, start, stop, peer, hfile,
# matrix): turns SIMDEX_HBASE_VERSION into what differs between the HBase
# versions simdex is tested against. Expects $here (scripts/hbase) and $home
# (the install dir, SIMDEX_HBASE_HOME) to be set; sets:
#
#   hbase_version   the version asked for (default 2.6.4)
#   hbase_artifact  its Maven version (2.x: the hadoop3 build)
#   hbase_pom       the pom install.sh resolves it with
#   cp_file         its runtime classpath, written by install.sh
#   peer_classes    where peer.sh compiles Peer.java against it
#   snappy_codec    hbase.io.compress.snappy.codec for start.sh
#   hadoop_pin      the Hadoop version its pom pins, or empty for HBase's own
#
# Each version has its own classpath file and compiled peer, so versions do
# not overwrite each other; the default keeps the names it always had
# ($home/cp.txt, $home/peer), so installs made before versions existed stay
# valid. All versions share the local Maven repository (~/.m2), which holds
# any number of versions side by side.
#
# Versions:
#   2.6.4          the default; hbase-compression-snappy supplies the Snappy
#                  codec (snappy-java, no native library)
#   2.5.11         Maven Central has no hbase-compression-snappy 2.5.11, so
#                  Snappy comes from Hadoop's own SnappyCodec, which is
#                  snappy-java as well since Hadoop 3.3.1 (2.5.11-hadoop3 is
#                  built on Hadoop 3.4.1)
#   3.0.0          only hbase-server 3.0.0 itself is on Maven Central; the
#                  modules it depends on (hbase-common, hbase-client,
#                  hbase-zookeeper, ... 3.0.0) and hbase-thirdparty 4.1.14 are
#                  not, so install.sh fails with Maven's list of them
#   3.0.0-alpha-4  the newest 3.0 pre-release whose modules are all on Maven
#                  Central (hbase-zookeeper stops at alpha-4); its Hadoop
#                  (3.2.4) has a native-only SnappyCodec, so its pom pins
#                  Hadoop 3.3.6, whose SnappyCodec is snappy-java
hbase_version="${SIMDEX_HBASE_VERSION:-2.6.4}"
hadoop_pin=""
case "$hbase_version" in
2.6.4)
	hbase_artifact=2.6.4-hadoop3
	hbase_pom="$here/pom.xml"
	snappy_codec=org.apache.hadoop.hbase.io.compress.xerial.SnappyCodec
	;;
2.5.11)
	hbase_artifact=2.5.11-hadoop3
	hbase_pom="$here/pom-hadoop-snappy.xml"
	snappy_codec=org.apache.hadoop.io.compress.SnappyCodec
	;;
3.0.0)
	hbase_artifact=3.0.0
	hbase_pom="$here/pom-hadoop-snappy.xml"
	snappy_codec=org.apache.hadoop.io.compress.SnappyCodec
	;;
3.0.0-alpha-4)
	hbase_artifact=3.0.0-alpha-4
	hbase_pom="$here/pom-hadoop-snappy.xml"
	snappy_codec=org.apache.hadoop.io.compress.SnappyCodec
	hadoop_pin=3.3.6
	;;
*)
	echo "$(basename "$0"): SIMDEX_HBASE_VERSION must be 2.6.4 (default), 2.5.11, 3.0.0 or 3.0.0-alpha-4, not $hbase_version" >&2
	exit 2
	;;
esac
# versioned NAME prints $home/NAME for the default version and
# $home/NAME-<version> for another: where a version's classes and data go.
versioned() {
	if [ "$hbase_version" = 2.6.4 ]; then
		echo "$home/$1"
	else
		echo "$home/$1-$hbase_version"
	fi
}
if [ "$hbase_version" = 2.6.4 ]; then
	cp_file="$home/cp.txt"
else
	cp_file="$home/cp-$hbase_version.txt"
fi
peer_classes="$(versioned peer)"

# default_data prints the data directory start.sh and stop.sh use when
# SIMDEX_HBASE_DATA is unset: the default version keeps $home/data.
default_data() { versioned data; }
