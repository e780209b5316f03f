#!/usr/bin/env bash
# The fleet's figures (Tests/FleetTests/FleetMeasurements.swift), printed as MEASURE lines:
# upstream calls for a herd over three replicas, calls per minute under a cold flood, what
# clients see through a Redis restart, calls after Redis loses the window, a failing amodb,
# one client's made-up ids over six replicas, replica counts beside two million keys.
#
#   bash Tests/Perf/fleet-measurements.sh                 # all of them, a few minutes
#   bash Tests/Perf/fleet-measurements.sh aFailingHerd    # the tests whose names match
#
# Needs redis-server. The measurements are compiled with the FleetTests target and skipped
# unless AMODB_FLEET_MEASURE=1, which this sets; `swift test` alone never runs them. Exits
# non-zero when the build or a measurement fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)"; exit 2; }
AMODB_FLEET_MEASURE=1 swift test --filter "FleetMeasurements${1:+.*$1}" 2>&1 \
  | grep -E --line-buffered 'MEASURE|✘|Test run with|error:'
