#!/usr/bin/env bash
# Checks the Prometheus alerting rules in deploy/prometheus/: `promtool check
# rules` (syntax, PromQL, annotation templates) and `promtool test rules` (the
# unit tests in simdex-rules.test.yml: each alert fires on its synthetic series
# and stays silent on healthy ones). scripts/test.sh runs it.
#
# promtool comes from Debian's prometheus package. When promtool is missing
# this installs the package (apt-get, as root or through passwordless sudo)
# without letting it start or keep running the Prometheus daemon it ships:
# a policy-rc.d that forbids service starts is in place during the install,
# and on a systemd host a prometheus service found running afterwards is
# stopped and disabled. With promtool present it installs nothing.
#
# Without promtool and no way to install it the check fails under CI
# (CI=true) and is skipped with a message elsewhere.
set -euo pipefail
cd "$(dirname "$0")/../.."

rules=deploy/prometheus/simdex-rules.yml
tests=deploy/prometheus/simdex-rules.test.yml

install_promtool() {
	command -v apt-get >/dev/null 2>&1 || return 1
	local sudo=()
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			sudo=(sudo -n)
		else
			return 1
		fi
	fi
	# A policy-rc.d exiting 101 makes invoke-rc.d and deb-systemd-invoke
	# refuse to start services from maintainer scripts. One that exists
	# already (container images ship one) is left as it is.
	local policy=/usr/sbin/policy-rc.d own_policy=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
		"${sudo[@]}" chmod 755 "$policy"
		own_policy=1
	fi
	local rc=0
	local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends)
	"${apt[@]}" install prometheus || { "${sudo[@]}" apt-get -q update && "${apt[@]}" install prometheus; } || rc=$?
	if [ -n "$own_policy" ]; then
		"${sudo[@]}" rm -f "$policy"
	fi
	if [ -d /run/systemd/system ] && systemctl is-active --quiet prometheus 2>/dev/null; then
		"${sudo[@]}" systemctl disable --now prometheus
	fi
	return "$rc"
}

if ! command -v promtool >/dev/null 2>&1; then
	echo "== promtool missing: installing Debian's prometheus package (its daemon is not started)"
	if ! install_promtool || ! command -v promtool >/dev/null 2>&1; then
		if [ "${CI:-}" = true ]; then
			echo "== promtool: cannot install it (needs apt-get and root or passwordless sudo); the rule checks cannot run" >&2
			exit 1
		fi
		echo "== promtool: cannot install it (needs apt-get and root or passwordless sudo); rule checks skipped"
		exit 0
	fi
fi

promtool check rules "$rules"
promtool test rules "$tests"
