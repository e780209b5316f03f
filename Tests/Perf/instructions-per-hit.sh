#!/usr/bin/env bash
# User-space instructions per cache hit, counted by callgrind (valgrind): instruction counts
# do not move with the machine's load, so before/after comparisons hold on a noisy box.
#
#   bash Tests/Perf/instructions-per-hit.sh [binary]   (default: .build/release/amodb-proxy,
#                                                      where scripts/build-release.sh puts it)
#
# Runs the binary (--sandbox, access log on as shipped) under callgrind twice: once with
# FEW hits and once with MANY hits of the trending page on one keep-alive connection, after
# the same warm-up. Start-up, warm-up and shutdown cost the same in both runs, so
# (I_many - I_few) / (MANY - FEW) is the cost of one hit, the whole process's user-space
# instructions (every thread: event loops, Dispatch, the access-log writer).
#
# HIT_ACCEPT_ENCODING="gzip, deflate, br" sends that header with every request (URLSession's):
# the hits are then compressed ones (the first answer fills the cache; the variants are made
# off the event loops just after, so the warm-up waits for them).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/release/amodb-proxy}
FEW=${FEW:-1000}
MANY=${MANY:-6000}
path=${HIT_PATH:-/3/trending/movie/week}
[ -x "$binary" ] || { echo "no binary at $binary (build it with scripts/build-release.sh)"; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 (Debian 12) cannot read the DWARF 5 the toolchain writes: count a copy
# without debug information (symbols stay, so callgrind_annotate still names functions).
objcopy --strip-debug "$binary" "$work/amodb-proxy"
binary="$work/amodb-proxy"

count() {   # $1: hits; prints the total instructions (Ir) of the run
  local hits=$1 out="$work/cg.$1" log="$work/log.$1"
  PORT=0 HOST=127.0.0.1 AMODB_LOG_LEVEL=warning valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$binary" --sandbox >"$log" 2>"$log.err" &
  local pid=$!
  local port=""
  for _ in $(seq 1 600); do
    port=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -1 | sed 's/.*://') || true
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "the proxy did not start"; cat "$log" "$log.err"; kill $pid; exit 1; }
  python3 - "$port" "$path" "$hits" <<'PY'
import os, socket, sys, time
port, path, hits = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
accept = os.environ.get("HIT_ACCEPT_ENCODING", "")
request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           + (f"Accept-Encoding: {accept}\r\n" if accept else "") + "\r\n").encode()
def one():
    s.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += s.recv(65536)
    return head
one()                 # the fill
time.sleep(2)         # its variants are made meanwhile, off the event loops
for _ in range(20):   # warm-up: hits
    one()
for _ in range(hits):
    head = one()
    assert b"hit" in head, head
    if accept:
        assert b"Content-Encoding:" in head, head
PY
  kill -TERM $pid; wait $pid || true
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}'
}
few=$(count "$FEW")
many=$(count "$MANY")
echo "instructions: $FEW hits $few, $MANY hits $many"
echo "instructions per hit: $(( (many - few) / (MANY - FEW) ))"
