#!/usr/bin/env bash
# The README's two commands on a machine with only the Swift toolchain: in the container
# kit's builder image (the toolchain bind-mounted read-only, no network, none of
# libssl-dev, libbrotli-dev or their headers), a copy of the working tree (without .build)
# runs `swift run amodb-proxy --sandbox` and is asked over loopback, then `swift test`.
# Last, with libbrotlienc removed from the container, the same binary still serves,
# says br is off, and answers a client that accepts br in gzip.
#
# Usage (as root): bash Tests/BareMachine/run.sh
# Environment:
#   CONTAINER_KIT  kit directory [<repo>/../shared/container]
#   BARE_TEST_FILTER  a `swift test --filter` pattern; unset: the whole suite, as the
#                     README runs it
# Prints `ok - …` / `not ok - …` per check, then `N passed, N failed`; exits 1 if any
# check failed, 2 if the container could not be run at all.
#
# Slow by design: nothing is cached between runs, so the proxy and then the tests compile
# cold inside the container, and most of the time is those two debug builds. The whole
# suite runs, as the README's command does; tests that need what the image lacks
# (redis-server, python3's brotli) skip themselves, and their reasons are printed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/../.." && pwd)
cd "$repo"

kit=${CONTAINER_KIT:-$repo/../shared/container}
builder=localhost/swift-builder:bookworm
name="amodb-proxy-bare-$$-$(date +%s)"
t0=$(date +%s)

cleanup() {
  local status=$?
  if command -v podman >/dev/null 2>&1 && podman container exists "$name" 2>/dev/null; then
    podman rm -f -t 0 "$name" >/dev/null 2>&1 || true
  fi
  rm -rf "${work:-}"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d)

# setup.sh is idempotent (about a second once the images exist) and checks the builder
# image against the current toolchain.
if ! bash "$kit/setup.sh" >"$work/setup.log" 2>&1; then
  tail -n 40 "$work/setup.log"
  echo "not ok - container kit setup ($kit/setup.sh)"
  echo "0 passed, 1 failed"
  exit 2
fi
# The toolchain the builder image was made for, mounted where it was at build time.
toolchain=$(podman image inspect --format '{{ index .Labels "container-kit.toolchain" }}' "$builder")
if [[ -z $toolchain || ! -x $toolchain/usr/bin/swift ]]; then
  echo "not ok - $builder names a toolchain here (got '${toolchain}')"
  echo "0 passed, 1 failed"
  exit 2
fi

# The working tree as it is (uncommitted edits included), without build products or git.
tar -C "$repo" --exclude=./.build --exclude='./.build-*' --exclude=./.swiftpm --exclude=./.git \
  -cf "$work/repository.tar" .

# What runs inside: plain bash, since the image has neither curl nor python3; HTTP goes
# through bash's /dev/tcp.
cat >"$work/inside.sh" <<'INSIDE'
set -uo pipefail
passed=0
failed=0
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# --- the machine is bare --------------------------------------------------------
for package in libssl-dev libbrotli-dev; do
  if installed "$package"; then not_ok "$package is not installed"; else ok "$package is not installed"; fi
done
for header in /usr/include/openssl/bn.h /usr/include/brotli/encode.h; do
  if [[ -e $header ]]; then not_ok "no $header"; else ok "no $header"; fi
done
# zlib's header is there because the toolchain needs it (CZlib links it, as before).
if installed zlib1g-dev; then ok "zlib1g-dev is installed (the toolchain's own dependency)"; else not_ok "zlib1g-dev is installed"; fi
echo "# runtime libraries: $(for p in libssl3 libbrotli1; do installed "$p" && printf '%s ' "$p"; done)"

mkdir -p /build && tar -xf /in/repository.tar -C /build && cd /build || { not_ok "repository copied"; exit 2; }

# request PATH ACCEPT_ENCODING: the answer (head and body) in /tmp/response, over /dev/tcp.
request() {
  exec 3<>/dev/tcp/127.0.0.1/8080 || return 1
  printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: %s\r\nConnection: close\r\n\r\n' "$1" "$2" >&3
  cat <&3 >/tmp/response
  exec 3<&-
}
status() { head -n 1 /tmp/response | tr -d '\r' | cut -d' ' -f2; }
header() { sed -n '2,/^\r$/p' /tmp/response | tr -d '\r' | grep -i "^$1:" | head -n 1 | cut -d: -f2- | sed 's/^ *//'; }
# wait_for_proxy PID SECONDS: until /healthz answers 200, the process ends, or time is up.
wait_for_proxy() {
  local deadline=$(( $(date +%s) + $2 ))
  while (( $(date +%s) < deadline )); do
    if request /healthz identity 2>/dev/null && [[ $(status) == 200 ]]; then return 0; fi
    kill -0 "$1" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}
# stop PID: SIGTERM to its process group (swift run and the proxy it started), then wait.
stop() {
  kill -TERM -- "-$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# --- README command 1: swift run amodb-proxy --sandbox -----------------------------
# setsid: its own process group, so that stop() reaches the proxy whether swift run
# execs it or waits for it. The first run compiles the proxy.
run_start=$(date +%s)
setsid swift run amodb-proxy --sandbox >/tmp/run.log 2>&1 &
proxy=$!
if wait_for_proxy "$proxy" 3600; then
  ok "swift run amodb-proxy --sandbox: builds and serves /healthz ($(( $(date +%s) - run_start )) s, the build included)"
else
  not_ok "swift run amodb-proxy --sandbox: builds and serves /healthz"
  tail -n 30 /tmp/run.log | sed 's/^/# /'
fi
request /3/trending/movie/week identity || true
if [[ $(status) == 200 ]] && grep -q '"results":\[' /tmp/response; then
  ok "GET /3/trending/movie/week is 200 with results"
else
  not_ok "GET /3/trending/movie/week is 200 with results (status $(status))"
fi
# br is made off the event loops after the fill: asked again until it is there.
coding=""
for _ in $(seq 1 50); do
  request /3/trending/movie/week 'gzip, deflate, br' || true
  coding=$(header Content-Encoding)
  [[ $coding == br ]] && break
  sleep 0.2
done
if [[ $coding == br ]]; then
  ok "with libbrotli1 (loaded at run time), Accept-Encoding: gzip, deflate, br gets br"
else
  not_ok "with libbrotli1, Accept-Encoding: gzip, deflate, br gets br (got '${coding:-identity}')"
fi
binary=$(swift build --show-bin-path 2>/dev/null)/amodb-proxy
if HOST=127.0.0.1 PORT=8080 "$binary" --healthcheck; then
  ok "amodb-proxy --healthcheck exits 0"
else
  not_ok "amodb-proxy --healthcheck exits 0"
fi
stop "$proxy"

# --- README command 2: swift test ------------------------------------------------
test_start=$(date +%s)
if [[ -n ${BARE_TEST_FILTER:-} ]]; then
  swift test --filter "$BARE_TEST_FILTER" >/tmp/test.log 2>&1
  test_status=$?
  what="swift test --filter '$BARE_TEST_FILTER'"
else
  swift test >/tmp/test.log 2>&1
  test_status=$?
  what="swift test"
fi
summary=$(grep -E '^(.*Test run with .* (passed|failed)|Executed [0-9]+ tests)' /tmp/test.log | tail -n 2 | sed 's/^[^A-Za-z]*//' | paste -sd ';' -)
if [[ $test_status == 0 ]]; then
  ok "$what passes ($(( $(date +%s) - test_start )) s, the test build included; ${summary:-no summary})"
else
  not_ok "$what passes (status $test_status after $(( $(date +%s) - test_start )) s; ${summary:-no summary})"
  grep -E 'error:|✘|failed' /tmp/test.log | head -n 40 | sed 's/^/# /'
fi
# Swift Testing's `➜ Test name() skipped: "reason"` (or `skipped.`), counted by reason.
grep -E '^➜ Test .* skipped(:|\.$)' /tmp/test.log | sed -E 's/.* skipped(: |\.$)//' | sort | uniq -c \
  | sed -E 's/^ *([0-9]+) (.*)/# skipped: \1 × \2/; s/× $/× (no reason given)/'

# --- without libbrotlienc: br off, gzip served -----------------------------------
# libcurl needs libbrotlidec only, so removing the encoder leaves the binary able to
# start; the proxy loads both or neither.
rm -f /usr/lib/*-linux-gnu/libbrotlienc.so.1*
"$binary" --sandbox >/tmp/nobrotli.log 2>&1 &
proxy=$!
if wait_for_proxy "$proxy" 60; then
  ok "without libbrotlienc.so.1 the proxy starts and serves /healthz"
else
  not_ok "without libbrotlienc.so.1 the proxy starts and serves /healthz"
  tail -n 20 /tmp/nobrotli.log | sed 's/^/# /'
fi
if grep -q 'br answers are off' /tmp/nobrotli.log && grep -q 'apt-get install libbrotli1' /tmp/nobrotli.log; then
  ok "it logs that br answers are off, naming libbrotli1"
else
  not_ok "it logs that br answers are off, naming libbrotli1"
  head -n 5 /tmp/nobrotli.log | sed 's/^/# /'
fi
codings=""
for _ in 1 2 3; do
  request /3/movie/550 'gzip, deflate, br' || true
  codings="$codings $(status):$(header Content-Encoding)"
  sleep 0.5
done
if [[ $codings == ' 200:gzip 200:gzip 200:gzip' ]]; then
  ok "Accept-Encoding: gzip, deflate, br gets gzip, on the fill and on hits (${codings# })"
else
  not_ok "Accept-Encoding: gzip, deflate, br gets gzip, on the fill and on hits (${codings# })"
fi
kill -TERM "$proxy" 2>/dev/null
wait "$proxy" 2>/dev/null

echo "# inside the container: $(elapsed) s"
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
INSIDE

echo "# $(podman --runtime runc run --rm --network none -v "$toolchain:$toolchain:ro" "$builder" swift --version 2>&1 | head -n 1)"
set +e
podman --runtime runc run --rm --name "$name" --network none \
  -v "$toolchain:$toolchain:ro" -v "$work:/in:ro" \
  -e BARE_TEST_FILTER="${BARE_TEST_FILTER:-}" \
  "$builder" bash /in/inside.sh 2>&1 | tee "$work/output"
status=${PIPESTATUS[0]}
set -e
echo "# total $(( $(date +%s) - t0 )) s"
if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$work/output"; then
  echo "not ok - the container ran to the end (status $status)"
  exit 2
fi
exit "$status"
