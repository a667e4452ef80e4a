#!/usr/bin/env bash
# toolhost beside Hermes Agent 0.19.0, measured in one run (the machines are noisy, so
# only ratios from the same run mean anything). Figures go into BENCHMARKS.md.
#
# Needs: a virtualenv with `pip install hermes-agent==0.19.0` (HERMES_PY) and the
# baseline scripts from the reference material (HERMES_BENCH, default
# ../shared/bench/python relative to the repository).
#
#   host/benches/compare_hermes.sh            # cold start + dispatch pipeline
#   RUNS=20 host/benches/compare_hermes.sh cold
set -euo pipefail
cd "$(dirname "$0")/../.."

HERMES_PY=${HERMES_PY:-/opt/hermes/bin/python}
[ -x "$HERMES_PY" ] || HERMES_PY=/work/hermes-venv/bin/python
HERMES_BENCH=${HERMES_BENCH:-$(cd .. && pwd)/shared/bench/python}
RUNS=${RUNS:-10}
what=${1:-all}

export HERMES_HOME=${HERMES_HOME:-/tmp/hermes-bench-home}
export HERMES_DISABLE_LAZY_INSTALLS=1

# The shipped build: the `dist` profile (release + fat LTO), with every bundled plugin
# next to the binary as a user gets them (web and browser included: they are loaded at
# every start even when unavailable).
cargo build --profile dist -p toolhost -p toolhost-plugin-notes -p toolhost-plugin-textkit \
    -p toolhost-plugin-policy -p toolhost-plugin-web -p toolhost-plugin-browser >/dev/null 2>&1
BIN=$PWD/target/dist/toolhost
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

cold() {
    echo "== cold process: every toolset's definitions ($RUNS runs each, interleaved)"
    local t_wall=() t_rss=() h_wall=() h_rss=()
    # Warm the page cache and Hermes' home skeleton once, unrecorded.
    "$BIN" --home "$HOME_DIR" schema >/dev/null
    (cd "$HERMES_BENCH" && "$HERMES_PY" startup.py --sets all >/dev/null 2>&1)
    for _ in $(seq "$RUNS"); do
        start=$(date +%s%N)
        /usr/bin/time -o "$HOME_DIR/t" -f "%M" "$BIN" --home "$HOME_DIR" schema >/dev/null
        t_wall+=("$(( ($(date +%s%N) - start) / 1000 ))"); t_rss+=("$(cat "$HOME_DIR/t")")
        start=$(date +%s%N)
        (cd "$HERMES_BENCH" && /usr/bin/time -o "$HOME_DIR/t" -f "%M" "$HERMES_PY" startup.py --sets all >/dev/null 2>&1)
        h_wall+=("$(( ($(date +%s%N) - start) / 1000 ))"); h_rss+=("$(cat "$HOME_DIR/t")")
    done
    local tw tr hw hr
    tw=$(printf '%s\n' "${t_wall[@]}" | median); tr=$(printf '%s\n' "${t_rss[@]}" | median)
    hw=$(printf '%s\n' "${h_wall[@]}" | median); hr=$(printf '%s\n' "${h_rss[@]}" | median)
    awk -v tw="$tw" -v tr="$tr" -v hw="$hw" -v hr="$hr" 'BEGIN {
        printf "toolhost schema:          wall %8.1f ms  peak RSS %5.1f MiB\n", tw / 1000, tr / 1024
        printf "hermes startup.py (all):  wall %8.1f ms  peak RSS %5.1f MiB\n", hw / 1000, hr / 1024
        printf "Hermes / toolhost:        wall %.0fx, RSS %.1fx (medians)\n", hw / tw, hr / tr }'
}

dispatch() {
    echo "== warm dispatch of a no-op tool"
    (cd "$HERMES_BENCH" && "$HERMES_PY" dispatch.py -n 20000 -r 5 --defs-n 200 --defs-r 3) | tee /tmp/hermes-dispatch.txt
    cargo bench -p toolhost --bench pipeline -- --warm-up-time 1 --measurement-time 3 2>/dev/null | grep -E 'time:|^[a-z]' | tee /tmp/toolhost-pipeline.txt
}

case "$what" in
    cold) cold ;;
    dispatch) dispatch ;;
    all) cold; dispatch ;;
    *) echo "usage: $0 [cold|dispatch|all]" >&2; exit 2 ;;
esac
