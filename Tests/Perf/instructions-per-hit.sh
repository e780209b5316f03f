#!/usr/bin/env bash
# User-space instructions per cache hit, counted by callgrind (valgrind): instruction counts
# do not move with the machine's load, so before/after comparisons hold on a noisy box.
#
#   bash Tests/Perf/instructions-per-hit.sh [binary]   (default: .build/release/amodb-proxy,
#                                                      where scripts/build-release.sh puts it)
#
# Runs the binary (--sandbox, access log on as shipped) under callgrind twice: once with
# FEW hits and once with MANY hits of the trending page on one keep-alive connection, after
# the same warm-up, counting from the first counted hit (callgrind_control -i on) to the
# exit. Shutdown costs the same in both runs, so (I_many - I_few) / (MANY - FEW) is the cost
# of one hit, the whole process's user-space instructions (every thread: event loops,
# Dispatch, the access-log writer). It also prints the event loop's share, the same
# difference of `EventLoop.serveReady`'s inclusive count (reading, routing, the lookup, the
# log line, the serialization and the `sendmsg`), which moves far less between runs than the
# whole process's: the Dispatch threads' wake-ups depend on timing.
# Tests/Perf/instructions-gate.sh compares both with a recorded baseline in CI.
#
# HIT_ACCEPT_ENCODING="gzip, deflate, br" sends that header with every request (URLSession's):
# the hits are then compressed ones (the first answer fills the cache; the variants are made
# off the event loops just after, so the warm-up waits for them).
#
# HIT_MIX=300 asks, instead of one path, for the benchmark's mix (../shared/bench/mix-paths.py:
# the trending lists and 300 movies in two languages, a third with credits), each request the
# next path, so no request repeats the one before it. The upstream is then the benchmark's
# fake_upstream.py (the sandbox's rate limit would refuse the warm-up), and every path is
# filled before the counted hits.
#
# HIT_TOKENS_FILE=tokens (one a line, as ../shared/bench/user-tokens.py writes them) sends each
# request with the next token as `Authorization: Bearer`, as signed-in users would; the warm-up
# sends each token once first, so the counted hits find every token verified before. The
# proxy's user-token settings (AMODB_JWT_*) come from the environment, with a per-client rate
# limit high enough for the run (AMODB_CLIENT_RATE_LIMIT, AMODB_CLIENT_BURST).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/release/amodb-proxy}
FEW=${FEW:-1000}
MANY=${MANY:-6000}
path=${HIT_PATH:-/3/trending/movie/week}
MIX=${HIT_MIX:-}
bench="$(pwd)/../shared/bench"
[ -x "$binary" ] || { echo "no binary at $binary (build it with scripts/build-release.sh)"; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
# valgrind 3.19 (Debian 12) cannot read the DWARF 5 the toolchain writes: count a copy
# without debug information (symbols stay, so callgrind_annotate still names functions).
objcopy --strip-debug "$binary" "$work/amodb-proxy"
binary="$work/amodb-proxy"

upstream=(--sandbox)
if [ -n "$MIX" ]; then
  [ -f "$bench/mix-paths.py" ] || { echo "HIT_MIX needs ../shared/bench (mix-paths.py, fake_upstream.py)"; exit 2; }
  python3 "$bench/mix-paths.py" "$MIX" >"$work/paths"
  upstream_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  AMODB_KEY=perf-key python3 "$bench/fake_upstream.py" "$upstream_port" >"$work/upstream.log" 2>&1 &
  upstream_pid=$!
  trap 'kill $upstream_pid 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
  upstream=()
  export AMODB_KEY=perf-key AMODB_UPSTREAM_URL="http://127.0.0.1:$upstream_port/3" AMODB_RATE_LIMIT=100000 AMODB_CLIENT_SHARE=1
else
  echo "$path" >"$work/paths"
fi

count() {   # $1: hits; prints the total instructions (Ir) of the run and the event loop's
  local hits=$1 out="$work/cg.$1" log="$work/log.$1"
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  PORT=$port HOST=127.0.0.1 AMODB_LOG_LEVEL=warning valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$binary" "${upstream[@]}" >"$log" 2>"$log.err" &
  local pid=$!
  python3 -c "import socket,sys,time
for _ in range(600):
    try: socket.create_connection(('127.0.0.1',$port)).close(); sys.exit(0)
    except OSError: time.sleep(0.1)
sys.exit(1)" || { echo "the proxy did not start"; cat "$log" "$log.err"; kill $pid; exit 1; }
  python3 - "$port" "$work/paths" "$hits" "$pid" <<'PY'
import os, socket, subprocess, sys, time
port, paths_file, hits, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
paths = [line.strip() for line in open(paths_file) if line.strip()]
s = socket.create_connection(("127.0.0.1", port))
accept = os.environ.get("HIT_ACCEPT_ENCODING", "")
tokens_file = os.environ.get("HIT_TOKENS_FILE", "")
tokens = [line.strip() for line in open(tokens_file) if line.strip()] if tokens_file else [""]
def request(index):
    path, token = paths[index % len(paths)], tokens[index % len(tokens)]
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + (f"Authorization: Bearer {token}\r\n" if token else "")
            + (f"Accept-Encoding: {accept}\r\n" if accept else "") + "\r\n").encode()
sent = 0
def one():
    global sent
    s.sendall(request(sent))
    sent += 1
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += s.recv(65536)
    return head
for _ in paths:        # the fills
    one()
# Their variants are made meanwhile, off the event loops: under callgrind, on a busy machine,
# compressing the mix's 608 answers takes minutes, and any left over would be counted as the
# hits' cost (hundreds of thousands of instructions a hit). Wait until the process is idle:
# no more than 2 ticks of CPU time (20 ms) in each half second for two seconds.
def cpu_ticks():
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # utime + stime, every thread's
before, quiet = cpu_ticks(), 0
for _ in range(1200):
    time.sleep(0.5)
    now = cpu_ticks()
    quiet = quiet + 1 if now - before <= 2 else 0
    before = now
    if quiet >= 4:
        break
else:
    sys.exit("the proxy did not go idle after the fills")
# Warm-up: hits, and every token verified once; a whole number of rounds of the paths, so
# the counted hits ask for the same paths in the same order with tokens or without.
warm = 20 + len(paths) + len(tokens)
for _ in range(warm + (-warm) % len(paths)):
    one()
# valgrind names its pipe to callgrind_control after $HOST, which the proxy's HOST set.
subprocess.run(["callgrind_control", "-i", "on", pid], check=True, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, env={**os.environ, "HOST": "127.0.0.1"})
for _ in range(hits):
    head = one()
    assert b"hit" in head, head
    if accept:
        assert b"Content-Encoding:" in head, head
PY
  kill -TERM $pid; wait $pid || true
  local total loop
  total=$(callgrind_annotate "$out" 2>"$out.annotate-err" | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
  loop=$(callgrind_annotate --inclusive=yes "$out" 2>>"$out.annotate-err" \
    | awk '/9EventLoopC10serveReady/ && !done {gsub(",", "", $1); print $1; done = 1}')
  echo "$total ${loop:-0}"
}
read -r few few_loop < <(count "$FEW")
read -r many many_loop < <(count "$MANY")
echo "instructions: $FEW hits $few, $MANY hits $many"
echo "instructions per hit: $(( (many - few) / (MANY - FEW) ))"
echo "event loop instructions per hit: $(( (many_loop - few_loop) / (MANY - FEW) ))"
