#!/usr/bin/env bash
# Makes the hot-text order, scripts/hot-text.order: the functions a running proxy executes,
# which the release link lays out first in the binary's code (scripts/build-release.sh passes
# the file to lld as --symbol-ordering-file).
#
#   scripts/hot-text.sh generate   rewrites scripts/hot-text.order (valgrind, python3): a
#                                  minute of profiling, after the static build if it is stale
#
# Run it, and commit the file, whenever scripts/check-hot-text.sh fails (CI runs that check
# on the static binary; it names the missing functions) and after a toolchain update.
#
# Why: the kernel maps a program's code 64 KiB around each page it first executes
# (fault-around), so the code's resident size is the number of 64 KiB windows holding
# something that ran, not the size of what ran. Linked in archive order, the functions a
# proxy runs (start-up, fills through URLSession, hits in every coding, a herd, errors) lie
# across the static binary's 16 MB of code and make ~12 MB of it resident; laid out together
# they make ~6 MB (docs/performance.md, "The hot-text order"). Swift's and Foundation's
# archives keep most of a source file's functions in one section, which lld places whole:
# what ran comes with its neighbours.
#
# How: the static binary runs under callgrind as a proxy in front of a second copy started
# with --sandbox (the stand-in, not profiled), and is sent the fixed traffic below. Every
# function callgrind saw run in the profiled binary is written, in groups by how much it ran
# (its own instructions, by decade: 10^7 and more first, then 10^6, …, so the hottest code
# shares the fewest pages), sorted by name within a group. Timing decides the exact counts
# (threads, the herd), not which decade a function falls in, except near a boundary: two
# runs list the same names and differ in a few lines' places. Names defined more than once
# in the binary (local helpers that many files emit under one name) are left out: lld would
# pull every section defining them to the front.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
order=scripts/hot-text.order

generate() {
  command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
  local binary
  binary=$(scripts/build-release.sh --static | tail -1)
  # Globals, not locals: the trap runs after this function returns.
  work=$(mktemp -d)
  back_pid="" front_pid=""
  trap 'kill $back_pid $front_pid 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
  # valgrind 3.19 (Debian 12) cannot read the DWARF 5 the toolchain writes: profile a copy
  # without debug information (its symbols, which the order names, stay).
  objcopy --strip-debug "$binary" "$work/amodb-proxy"
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
  local back front
  back=$(free_port)
  front=$(free_port)
  PORT=$back HOST=127.0.0.1 AMODB_ACCESS_LOG=off "$binary" --sandbox >"$work/back.log" 2>&1 &
  back_pid=$!
  # The stand-in's plan allows 40 calls a minute; the traffic below fills 32 paths.
  PORT=$front HOST=127.0.0.1 AMODB_KEY=sandbox-key AMODB_UPSTREAM_URL="http://127.0.0.1:$back/3" \
    AMODB_RATE_LIMIT=40 AMODB_CLIENT_SHARE=1 \
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
    "$work/amodb-proxy" >"$work/front.log" 2>"$work/front.err" &
  front_pid=$!
  python3 - "$front" <<'PY'
import http.client, socket, sys, threading, time

port = int(sys.argv[1])
for _ in range(600):
    try:
        socket.create_connection(("127.0.0.1", port)).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the profiled proxy did not start")

def connection():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)

def get(conn, path, headers={}, method="GET"):
    conn.request(method, path, headers=headers)
    response = conn.getresponse()
    response.read()
    return response

trending = [f"/3/trending/{kind}/{window}" for kind in ("all", "movie", "tv", "person") for window in ("day", "week")]
queries = ["", "?language=de-DE", "?append_to_response=credits", "?language=pt-br&append_to_response=credits,ratings"]
movies = [f"/3/movie/{movie}{query}" for movie in (550, 603, 13, 680, 155) for query in queries]
paths = trending + movies + ["/3/configuration"]
codings = [{}, {"Accept-Encoding": "gzip"}, {"Accept-Encoding": "br"}, {"Accept-Encoding": "gzip, deflate, br"}]

conn = connection()
for path in paths:                 # the fills
    get(conn, path)
get(conn, "/3/movie/999999")       # amodb's 404, kept as a failure
time.sleep(5)                      # the compressed variants are made off the event loops
for path in paths:                 # hits in every coding, revalidations, HEAD
    for headers in codings:
        response = get(conn, path, headers)
        tag = response.getheader("ETag")
        if tag:
            get(conn, path, {**headers, "If-None-Match": tag})
    get(conn, path, method="HEAD")
get(conn, "/3/trending/movie/week?page=2")

def hits(offset):
    mine = connection()
    for n in range(150):
        get(mine, paths[(n + offset) % len(paths)], codings[n % len(codings)])
threads = [threading.Thread(target=hits, args=(7 * i,)) for i in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()

pipelined = socket.create_connection(("127.0.0.1", port))
pipelined.sendall(b"".join(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for path in paths[:10]))
time.sleep(2)
pipelined.close()

def herd():
    get(connection(), "/3/movie/278")
threads = [threading.Thread(target=herd) for _ in range(40)]
for thread in threads: thread.start()
for thread in threads: thread.join()

for path in ["/3/movie/abc", "/3/trending/movie/week?page=900", "/3/nothing/here", "/healthz", "/metrics"]:
    get(conn, path)
get(conn, "/3/movie/550", method="POST")
for raw in [b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X: " + b"a" * 20000 + b"\r\n\r\n"]:
    bad = socket.create_connection(("127.0.0.1", port))
    bad.sendall(raw)
    bad.recv(65536)
    bad.close()
PY
  kill -TERM "$front_pid"
  wait "$front_pid" || true
  front_pid=""
  local defined="$work/defined"
  nm --defined-only "$binary" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort | uniq -c | awk '$1 == 1 {print $2}' >"$defined"
  {
    echo "# Generated by scripts/hot-text.sh generate: the functions a proxy ran under callgrind,"
    echo "# by decade of instructions run (most first), by name within one. lld lays them out"
    echo "# first in .text (scripts/build-release.sh); scripts/check-hot-text.sh checks that they"
    echo "# are still defined. Do not edit by hand."
    python3 - "$work/callgrind.out" "$work/amodb-proxy" "$defined" <<'PY'
import math, re, sys

# Self cost (instructions) per function of one object in a callgrind output file.
path, binary, defined_path = sys.argv[1], sys.argv[2], sys.argv[3]
defined = set(line.strip() for line in open(defined_path))
objects, functions = {}, {}

def name(table, spec):   # `(3) name` defines id 3; `(3)` refers to it
    match = re.match(r"\((\d+)\)(?: (.*))?$", spec)
    if not match:
        return spec
    if match.group(2) is not None:
        table[match.group(1)] = match.group(2)
    return table.get(match.group(1), "")

def plain(function):     # callgrind marks a recursion level as `name'2`
    return re.sub(r"'\d+$", "", function)

cost, current, obj, skip = {}, None, "", False
for line in open(path, errors="replace"):
    line = line.rstrip("\n")
    if skip:              # the line after `calls=` is the call's inclusive cost
        skip = False
        continue
    if line.startswith("ob="):
        obj = name(objects, line[3:])
    elif line.startswith("cob="):
        name(objects, line[4:])
    elif line.startswith("fn="):
        function = plain(name(functions, line[3:]))
        current = function if obj == binary and function in defined else None
        if current:
            cost.setdefault(current, 0)
    elif line.startswith("cfn="):
        name(functions, line[4:])
    elif line.startswith("calls="):
        skip = True
    elif current and line[:1] and (line[0].isdigit() or line[0] in "+-*"):
        fields = line.split()
        if len(fields) > 1 and fields[1].isdigit():
            cost[current] += int(fields[1])

def decade(instructions):
    return int(math.log10(instructions)) if instructions > 0 else -1

for function in sorted(cost, key=lambda f: (-decade(cost[f]), f)):
    print(function)
PY
  } >"$order.new"
  mv "$order.new" "$order"
  echo "hot-text: the profiled proxy answered $(grep -c '"status":' "$work/front.log" || true) requests"
  echo "hot-text: wrote $(grep -vc '^#' "$order") functions to $order"
  echo "hot-text: relink (scripts/build-release.sh --static), then scripts/check-hot-text.sh"
}

case ${1:-} in
  generate) generate ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
