#!/usr/bin/env bash
# The instructions-per-hit gate: fails when a cache hit costs more user-space instructions
# than the recorded baseline allows (docs/performance.md, "Invariants": the gate).
#
#   bash Tests/Perf/instructions-gate.sh [binary]            compare with the baseline
#   bash Tests/Perf/instructions-gate.sh --record [binary]   measure and rewrite the baseline
#
# binary: the release amodb-proxy (default .build/release/amodb-proxy, where
# scripts/build-release.sh puts it). Needs valgrind, python3 and ../shared/bench (the mix's
# paths and fake upstream).
#
# It counts with Tests/Perf/instructions-per-hit.sh (callgrind: counts do not move with the
# machine's load) on the two workloads the bench measures, the one path and the mix
# (HIT_MIX=300), and reads two figures from each: the event loop's share
# (`EventLoop.serveReady`, inclusive: parsing, routing, the lookup, the log line, the
# serialization and the `sendmsg`) and the whole process's (with the Dispatch threads and the
# log writer, whose wake-ups depend on timing). Each may exceed its baseline by its
# tolerance below, chosen from the spread of repeated runs of one binary; a figure below its
# baseline by more than that is reported, so that the gain is recorded (--record).
#
# Other changes land after a baseline is recorded: whoever lands one that moves a figure
# on purpose re-records in the same commit, and the baseline's header says at which commit
# and on which date it was measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
baseline=Tests/Perf/instructions-baseline.txt
# Tolerances, in instructions per hit (docs/performance.md, "Invariants"): the event loop's
# share, about twice its measured spread (up to 182), is the gate's sharp edge; the whole
# process's moves with the Dispatch threads' wake-ups (a spread of up to 1,171 on one
# machine, +2,078 on a fresh clone's release build), so its bound only catches what the
# loop's share cannot see, such as a new thread's work per hit.
loop_tolerance=${GATE_LOOP_TOLERANCE:-400}
process_tolerance=${GATE_PROCESS_TOLERANCE:-4000}

record=""
if [ "${1:-}" = --record ]; then
  record=1
  shift
fi
binary=${1:-.build/release/amodb-proxy}
[ -x "$binary" ] || { echo "gate: no binary at $binary (build it with scripts/build-release.sh)"; exit 2; }

measure() {   # $1: workload name, then the environment for instructions-per-hit.sh
  local name=$1 output
  shift
  output=$(env "$@" bash Tests/Perf/instructions-per-hit.sh "$binary")
  echo "$output" | sed "s/^/gate: $name: /" >&2
  local loop process
  loop=$(echo "$output" | awk -F': ' '/^event loop instructions per hit:/ {print $2}')
  process=$(echo "$output" | awk -F': ' '/^instructions per hit:/ {print $2}')
  [ -n "$loop" ] && [ -n "$process" ] || { echo "gate: $name: no figures in the output above" >&2; exit 1; }
  echo "$name $loop $process"
}

started=$(date +%s)
measured=$(
  measure one-path HIT_MIX=
  measure mix HIT_MIX=300
)
echo "gate: measured in $(($(date +%s) - started)) s"

if [ -n "$record" ]; then
  {
    echo "# Instructions per cache hit: the event loop's share and the whole process's, as"
    echo "# Tests/Perf/instructions-gate.sh measures them; rewritten by its --record."
    echo "# recorded: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' with uncommitted changes'), $(date -u +%F)"
    echo "# workload loop process"
    echo "$measured"
  } >"$baseline"
  echo "gate: recorded in $baseline:"
  cat "$baseline"
  exit 0
fi

[ -f "$baseline" ] || { echo "gate: no $baseline (record one with --record)"; exit 1; }
echo "gate: baseline $(grep '^# recorded:' "$baseline" | sed 's/^# recorded: //')"
failed=0
while read -r name loop process; do
  read -r _ base_loop base_process < <(grep "^$name " "$baseline") || {
    echo "gate: $name is not in $baseline (record one with --record)"
    failed=1
    continue
  }
  for figure in "loop $loop $base_loop $loop_tolerance" "process $process $base_process $process_tolerance"; do
    read -r what now base tolerance <<<"$figure"
    verdict=ok
    if ((now > base + tolerance)); then
      verdict="FAILED: more than $tolerance over the baseline"
      failed=1
    elif ((now < base - tolerance)); then
      verdict="below the baseline by more than $tolerance: record the gain (--record)"
    fi
    printf 'gate: %-8s %-7s %6d per hit, baseline %6d (%+d): %s\n' "$name" "$what" "$now" "$base" "$((now - base))" "$verdict"
  done
done <<<"$measured"
if ((failed)); then
  echo "gate: a hit costs more instructions than the baseline allows. If that is intended, say why in"
  echo "gate: the commit and re-record: bash Tests/Perf/instructions-gate.sh --record"
  exit 1
fi
