#!/usr/bin/env bash
# Builds the release amodb-proxy and runs the load/robustness checks against it:
# slowloris and idle peers, 5,000 concurrent keep-alive connections, the connection
# cap, running out of descriptors, graceful SIGTERM (see slow-peers.py).
#
#   Tests/Load/run.sh [--only s2,s5]
#
# Works from any directory; uses the default .build (if another build holds its lock,
# SwiftPM waits). Loopback only, about 30 s after the build. Prints `ok - ...` /
# `not ok - ...` per check, then `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail

load_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$load_dir/../.." && pwd)"
cd "$repo"

echo "==> swift build -c release --product amodb-proxy"
swift build -c release --product amodb-proxy

echo "==> Tests/Load/slow-peers.py"
exec python3 "$load_dir/slow-peers.py" --binary "$repo/.build/release/amodb-proxy" "$@"
