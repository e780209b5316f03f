#!/usr/bin/env bash
# Builds the amodb-proxy image with the offline container kit (podman + runc,
# ../shared/container beside the repository) and checks it end to end against
# the built-in sandbox: health, routes, cache, br (libbrotli1 opened at run time by the
# static binary; libcrypto too, or it would not start), HEALTHCHECK, non-root user,
# graceful SIGTERM shutdown (with the cache snapshot in the image's writable
# /var/lib/amodb-proxy), and the refusal to start without a key.
#
# Usage (as root): bash Tests/Container/run.sh
# Environment:
#   CONTAINER_TEST_PORT   loopback port the container listens on [18480]
#   CONTAINER_TEST_IMAGE  image tag [localhost/amodb-proxy:test]
#   CONTAINER_KIT         kit directory [<repo>/../shared/container]
#   SKIP_BUILD=1          test the existing image without rebuilding it
# Prints `ok - …` / `not ok - …` per check, then `N passed, N failed`; exits 1 if
# any check failed, 2 if the image could not be built or started at all.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/../.." && pwd)
cd "$repo"

kit=${CONTAINER_KIT:-$repo/../shared/container}
image=${CONTAINER_TEST_IMAGE:-localhost/amodb-proxy:test}
port=${CONTAINER_TEST_PORT:-18480}
base="http://127.0.0.1:$port"
suffix="$$-$(date +%s)"
name="amodb-proxy-test-$suffix"
nokey_name="amodb-proxy-nokey-$suffix"
podman_run=(podman --runtime runc run)

passed=0
failed=0
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
# check DESCRIPTION COMMAND…: ok when COMMAND exits 0.
check() {
  local description=$1
  shift
  if "$@"; then ok "$description"; else not_ok "$description"; fi
}

cleanup() {
  local status=$?
  for container in "$name" "$nokey_name"; do
    if command -v podman >/dev/null 2>&1 && podman container exists "$container" 2>/dev/null; then
      podman rm -f -t 0 "$container" >/dev/null 2>&1 || true
    fi
  done
  rm -rf "${work:-}"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d)

# --- setup: podman, the kit's base images, python3 -----------------------------
# setup.sh installs podman/runc/mmdebstrap and builds the two base images when
# missing or stale (first run: a few minutes), else it takes about a second. Run
# it every time: it also re-checks the images against the current toolchain,
# which build.sh insists on.
if ! command -v podman >/dev/null 2>&1 \
  || ! podman image exists localhost/swift-builder:bookworm \
  || ! podman image exists localhost/debian:bookworm-slim; then
  echo "# setting up the container kit ($kit/setup.sh); the first run takes a few minutes"
fi
if ! bash "$kit/setup.sh" >"$work/setup.log" 2>&1; then
  tail -n 40 "$work/setup.log"
  echo "not ok - container kit setup ($kit/setup.sh)"
  echo "0 passed, 1 failed"
  exit 2
fi
# The HTTP checks use python3 (curl is not on every fresh machine).
if ! command -v python3 >/dev/null 2>&1; then
  echo "# installing python3"
  DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends python3 >"$work/apt.log" 2>&1 \
    || { apt-get -q update >>"$work/apt.log" 2>&1 \
      && DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends python3 >>"$work/apt.log" 2>&1; } \
    || { tail -n 20 "$work/apt.log"; echo "not ok - python3 available"; echo "0 passed, 1 failed"; exit 2; }
fi
echo "# setup done at $(elapsed) s"

# --- build --------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  build_start=$(date +%s)
  if ! bash "$kit/build.sh" -t "$image" . >"$work/build.log" 2>&1; then
    tail -n 60 "$work/build.log"
    echo "not ok - image builds"
    echo "0 passed, 1 failed"
    exit 2
  fi
  ok "image builds ($(( $(date +%s) - build_start )) s)"
fi
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "# image $image: $(( size / 1000000 )) MB"

# --- HTTP helpers (python3: curl may be missing on a fresh machine) -------------
# http PATH [ACCEPT_ENCODING]: prints "STATUS", then header lines "name: value", a blank
# line and the body (as sent: urllib decodes no coding), into $work/response; returns
# non-zero if the request could not be made.
http() {
  python3 - "$base$1" "${2:-}" >"$work/response" 2>"$work/http.err" <<'EOF'
import sys, urllib.request, urllib.error
headers = {"Accept-Encoding": sys.argv[2]} if sys.argv[2] else {}
try:
    response = urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers=headers), timeout=10)
except urllib.error.HTTPError as error:
    response = error
print(response.status)
for name, value in response.headers.items():
    print(f"{name}: {value}")
print()
sys.stdout.flush()
sys.stdout.buffer.write(response.read())
EOF
}
status() { head -n 1 "$work/response"; }
header() { sed -n '2,/^$/p' "$work/response" | grep -i "^$1:" | head -n 1 | cut -d: -f2- | sed 's/^ *//' | tr -d '\r'; }
body() { sed -n '/^$/,$p' "$work/response" | tail -n +2; }
# json_check PYTHON_EXPRESSION: evaluates it with `d` = the parsed response body.
json_check() { body | python3 -c "import json, sys; d = json.load(sys.stdin); sys.exit(0 if ($1) else 1)" 2>/dev/null; }

# --- run the sandbox ----------------------------------------------------------
# With --network host a stale server on the port would answer in the proxy's place.
if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$port" 2>/dev/null; then
  echo "not ok - port $port is free (something already listens there; set CONTAINER_TEST_PORT)"
  echo "$passed passed, $((failed + 1)) failed"
  exit 2
fi
run_start=$(date +%s)
if ! "${podman_run[@]}" -d --name "$name" --network host \
  -e HOST=127.0.0.1 -e PORT="$port" -e AMODB_CACHE_SNAPSHOT=/var/lib/amodb-proxy/cache.json \
  "$image" --sandbox >"$work/run.log" 2>&1; then
  cat "$work/run.log"
  echo "not ok - container starts"
  echo "$passed passed, $((failed + 1)) failed"
  exit 2
fi
# Up to 30 s for /healthz to answer (it normally takes well under a second).
ready=0
for _ in $(seq 1 60); do
  if http /healthz && [[ $(status) == 200 ]]; then ready=1; break; fi
  if [[ $(podman inspect --format '{{.State.Running}}' "$name" 2>/dev/null) != true ]]; then break; fi
  sleep 0.5
done
if [[ $ready == 1 ]]; then
  ok "GET /healthz is 200 (ready $(( $(date +%s) - run_start )) s after podman run)"
else
  not_ok "GET /healthz is 200 within 30 s"
  podman logs "$name" 2>&1 | tail -n 20 | sed 's/^/# /'
fi

http /3/trending/movie/week || true
if [[ $(status) == 200 ]] && json_check 'len(d["results"]) == 20'; then
  ok "GET /3/trending/movie/week is 200 JSON with 20 results"
else
  not_ok "GET /3/trending/movie/week is 200 JSON with 20 results (status $(status))"
fi

http '/3/movie/550?append_to_response=credits,ratings' || true
if [[ $(status) == 200 ]] && json_check '"credits" in d and "ratings" in d'; then
  ok "GET /3/movie/550?append_to_response=credits,ratings is 200 with credits and ratings"
else
  not_ok "GET /3/movie/550?append_to_response=credits,ratings is 200 with credits and ratings (status $(status))"
fi

http /3/trending/movie/week || true
cache_status=$(header Cache-Status)
if [[ $(status) == 200 && ${cache_status,,} == *hit* ]]; then
  ok "second GET /3/trending/movie/week is a cache hit (Cache-Status: $cache_status)"
else
  not_ok "second GET /3/trending/movie/week is a cache hit (status $(status), Cache-Status: ${cache_status:-none})"
fi

# br comes from libbrotli1 in the runtime image, which the static binary opens with
# dlopen; it is made off the event loops after the fill, so asked again until it is there.
coding=""
for _ in $(seq 1 25); do
  http /3/trending/movie/week 'gzip, deflate, br' || true
  coding=$(header Content-Encoding)
  [[ $coding == br ]] && break
  sleep 0.2
done
if [[ $coding == br ]]; then
  ok "Accept-Encoding: gzip, deflate, br gets br (libbrotli1 loaded by the static binary)"
else
  not_ok "Accept-Encoding: gzip, deflate, br gets br (got '${coding:-identity}')"
fi

# podman does not enforce the HEALTHCHECK's --timeout on `healthcheck run` (and
# reports 0 when the hung run is interrupted), so bound it here; `timeout`
# exits 124 when it had to stop it.
hc_start=$(date +%s)
set +e
hc_output=$(timeout 10 podman healthcheck run "$name" 2>&1)
hc_status=$?
set -e
hc_seconds=$(( $(date +%s) - hc_start ))
if [[ $hc_status == 0 ]]; then
  ok "podman healthcheck run (the image's HEALTHCHECK) exits 0 (${hc_seconds} s)"
else
  not_ok "podman healthcheck run (the image's HEALTHCHECK) exits 0 (status $hc_status after ${hc_seconds} s${hc_output:+: ${hc_output//$'\n'/ }})"
fi

uid=$(timeout 10 podman exec "$name" id -u 2>/dev/null || echo "?")
user=$(podman inspect --format '{{.Config.User}}' "$name" 2>/dev/null || echo "?")
if [[ $uid =~ ^[0-9]+$ && $uid != 0 ]]; then
  ok "runs as non-root (uid $uid, User $user)"
else
  not_ok "runs as non-root (uid $uid, User $user)"
fi

# SIGTERM (the image's STOPSIGNAL); -t 15 exceeds the default 10 s grace period.
stop_start=$(date +%s)
podman stop -t 15 "$name" >/dev/null 2>&1 || true
stop_seconds=$(( $(date +%s) - stop_start ))
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$name" 2>/dev/null || echo "?")
if [[ $exit_code == 0 ]]; then
  ok "SIGTERM: exits 0 (in ${stop_seconds} s)"
else
  not_ok "SIGTERM: exits 0 (exit code $exit_code after ${stop_seconds} s)"
fi
podman logs "$name" >"$work/logs" 2>&1 || true
if grep -q '"message":"stopped"' "$work/logs"; then
  ok 'SIGTERM: logs "message":"stopped"'
else
  not_ok 'SIGTERM: logs "message":"stopped"'
  tail -n 10 "$work/logs" | sed 's/^/# /'
fi

# The image's one writable directory, for AMODB_CACHE_SNAPSHOT: saved on shutdown.
if podman cp "$name:/var/lib/amodb-proxy/cache.json" "$work/cache.json" >/dev/null 2>&1 \
  && python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$work/cache.json" 2>/dev/null; then
  ok "SIGTERM: cache snapshot saved to /var/lib/amodb-proxy/cache.json ($(wc -c <"$work/cache.json") bytes of JSON)"
else
  not_ok "SIGTERM: cache snapshot saved to /var/lib/amodb-proxy/cache.json"
  grep -i snapshot "$work/logs" | tail -n 3 | sed 's/^/# /'
fi

# --- no key, no --sandbox: refuses at once -------------------------------------
nokey_start=$(date +%s)
set +e
timeout 20 "${podman_run[@]}" --name "$nokey_name" --network host \
  -e HOST=127.0.0.1 -e PORT="$port" "$image" >"$work/nokey.log" 2>&1
nokey_status=$?
set -e
nokey_seconds=$(( $(date +%s) - nokey_start ))
if [[ $nokey_status != 0 && $nokey_status != 124 ]] && grep -q 'AMODB_KEY' "$work/nokey.log"; then
  ok "without a key or --sandbox: exits $nokey_status at once (${nokey_seconds} s) naming AMODB_KEY"
else
  not_ok "without a key or --sandbox: exits non-zero at once naming AMODB_KEY (status $nokey_status after ${nokey_seconds} s)"
  tail -n 5 "$work/nokey.log" | sed 's/^/# /'
fi

echo "# total $(elapsed) s"
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
