#!/usr/bin/env bash
# The fleet's figures (Tests/Perf/FleetMeasurements.swift), printed as MEASURE lines:
# upstream calls for a herd over three replicas, calls per minute under a cold flood, what
# clients see through a Redis restart, calls after Redis loses the window, a failing amodb,
# one client's made-up ids over six replicas, replica counts beside two million keys.
#
#   bash Tests/Perf/fleet-measurements.sh                 # all of them, a few minutes
#   bash Tests/Perf/fleet-measurements.sh aFailingHerd    # the tests whose names match
#
# Needs redis-server. The measurements use the FleetTests target's helpers (`Fleet`,
# `withFleet`), so the file is copied into Tests/FleetTests for this one run and removed
# after; `swift test` never runs it. Exits non-zero when the build or a measurement fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)"; exit 2; }
copy=Tests/FleetTests/FleetMeasurements.swift
[ -e "$copy" ] && { echo "$copy is there already: remove it first"; exit 2; }
cp Tests/Perf/FleetMeasurements.swift "$copy"
trap 'rm -f "$copy"' EXIT
AMODB_FLEET_MEASURE=1 swift test --filter "FleetMeasurements${1:+.*$1}" 2>&1 \
  | grep -E --line-buffered 'MEASURE|✘|Test run with|error:'
