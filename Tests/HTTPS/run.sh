#!/usr/bin/env bash
# The HTTPS path the apps take (docs/https.md), end to end on loopback:
# Caddy from Debian's package terminates TLS with its internal CA (no internet, no real
# domain) in front of the release amodb-proxy in --sandbox mode, with client tokens and
# AMODB_TRUSTED_PROXIES=127.0.0.1. Checks:
#   - config/compose/Caddyfile adapts and validates;
#   - curl, trusting only Caddy's CA, gets the trending page over HTTP/2, and Caddy
#     advertises HTTP/3; Cache-Status and ETag revalidation (304) pass through; without
#     that CA curl refuses the certificate;
#   - /metrics, /status and /status.json stay private behind Caddy; a call without a token gets 401 JSON;
#   - the access log names the real client (curl from 127.0.0.2, with forged
#     X-Forwarded-For and Forwarded headers), not Caddy's address nor a forged one;
#   - AmodbClient (URLSession) fetches through Caddy when the CA is in the system bundle
#     libcurl reads (Tests/IntegrationTests/HTTPSPathTests.swift), and fails without it.
#
# Usage: bash Tests/HTTPS/run.sh   (needs caddy: `apt-get install caddy`; curl; python3)
# Environment:
#   HTTPS_CHECK_PORT  Caddy's TCP and UDP port [a free one between 20000 and 29999]
# The proxy listens on a port the OS picks. Caddy's data and config live in a temporary
# directory, its CA is never installed anywhere, and every process started here is
# stopped on exit. URLSession on Linux (libcurl) reads no CA from the environment, so the
# trusting test runs in a private mount namespace (unshare) where the CA is appended to
# libcurl's bundle; the machine's bundle is untouched. Prints `ok - …` / `not ok - …`,
# then `N passed, N failed`; exits 1 if a check failed, 2 if the setup failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=Tests/lib/checks.sh
source "$script_dir/../lib/checks.sh"
enter_repo
begin_checks

for tool in caddy curl python3 unshare; do
  command -v "$tool" >/dev/null || setup_failed "$tool is installed (apt-get install ${tool/unshare/util-linux})"
done
python3 -c 'import yaml' 2>/dev/null || setup_failed "python3 reads YAML (apt-get install python3-yaml)"
# Caddy keeps certificates, keys and its CA under these: a throwaway directory.
caddy_env=(env HOME="$work/home" XDG_DATA_HOME="$work/caddy-data" XDG_CONFIG_HOME="$work/caddy-config")

# --- the compose example's Caddyfile ------------------------------------------------
compose_env=(AMODB_PROXY_DOMAIN=movies-proxy.example.com ACME_EMAIL=ops@example.com)
if "${caddy_env[@]}" "${compose_env[@]}" caddy adapt --config config/compose/Caddyfile --adapter caddyfile >"$work/adapted.json" 2>"$work/adapt.log" \
  && python3 - "$work/adapted.json" <<'EOF'
import json, sys
config = json.load(open(sys.argv[1]))
server = config["apps"]["http"]["servers"]["srv0"]
assert server["protocols"] == ["h1", "h2", "h3"], server.get("protocols")
assert server["routes"][0]["match"][0]["host"] == ["movies-proxy.example.com"]
assert "amodb-proxy:8080" in json.dumps(server["routes"]), "reverse_proxy amodb-proxy:8080"
EOF
then
  ok "config/compose/Caddyfile adapts: the domain's site, HTTP/1.1, 2 and 3, reverse_proxy amodb-proxy:8080"
else
  not_ok "config/compose/Caddyfile adapts as expected"
  tail -n 5 "$work/adapt.log" | sed 's/^/# /'
fi
if "${caddy_env[@]}" "${compose_env[@]}" caddy validate --config config/compose/Caddyfile --adapter caddyfile >"$work/validate.log" 2>&1; then
  ok "config/compose/Caddyfile validates (caddy validate)"
else
  not_ok "config/compose/Caddyfile validates (caddy validate)"
  tail -n 5 "$work/validate.log" | sed 's/^/# /'
fi
if python3 - config/compose/compose.yaml <<'EOF'
import sys, yaml
compose = yaml.safe_load(open(sys.argv[1]))
services, secrets = compose["services"], compose["secrets"]
proxy, caddy = services["amodb-proxy"], services["caddy"]
environment = proxy["environment"]
for name, setting in [("amodb_key", "AMODB_KEY_FILE"), ("client_tokens", "AMODB_PROXY_TOKENS_FILE")]:
    assert name in secrets and name in proxy["secrets"], name
    assert environment[setting] == f"/run/secrets/{name}", setting
caddy_address = caddy["networks"]["backend"]["ipv4_address"]
assert environment["AMODB_TRUSTED_PROXIES"] == caddy_address, "AMODB_TRUSTED_PROXIES is Caddy's address"
assert "ports" not in proxy, "only Caddy is published"
assert {"443:443", "443:443/udp"} <= set(caddy["ports"]), caddy["ports"]
# The Caddyfile's placeholders, required here: Caddy refuses an empty `email`.
for name in ("AMODB_PROXY_DOMAIN", "ACME_EMAIL"):
    assert caddy["environment"][name].startswith("${" + name + ":?"), name
EOF
then
  ok "config/compose/compose.yaml: key and tokens as secrets, Caddy trusted by address, only Caddy published (TCP and UDP 443)"
else
  not_ok "config/compose/compose.yaml is consistent"
fi

# --- the release binary, in sandbox mode, on a port the OS picks --------------------
echo "# scripts/build-release.sh ($(elapsed) s)"
binary=$("$repo/scripts/build-release.sh" 2>"$work/build.log" | tail -1) || { tail -n 30 "$work/build.log"; setup_failed "release build"; }
token="https-check-$RANDOM$RANDOM"
printf '%s\n' "$token" >"$work/tokens"
# The access log is the proxy's standard output, its JSON events its standard error.
start_sandboxed_proxy AMODB_TRUSTED_PROXIES=127.0.0.1 AMODB_PROXY_TOKENS_FILE="$work/tokens" AMODB_ACCESS_LOG=on
access_log="$work/proxy.out"
events_log="$work/proxy.err"
echo "# amodb-proxy on 127.0.0.1:$proxy_port"

# --- Caddy: a port of its own (TCP for h1/h2, UDP for h3) --------------------------
# port_is_free PORT [tcp|udp]: whether nothing holds it on 127.0.0.1 (both kinds by default).
port_is_free() {
  python3 - "$1" "${2:-tcp udp}" <<'EOF'
import socket, sys
kinds = {"tcp": socket.SOCK_STREAM, "udp": socket.SOCK_DGRAM}
for kind in (kinds[name] for name in sys.argv[2].split()):
    with socket.socket(socket.AF_INET, kind) as s:
        try:
            s.bind(("127.0.0.1", int(sys.argv[1])))
        except OSError:
            sys.exit(1)
EOF
}
if [[ -n ${HTTPS_CHECK_PORT:-} ]]; then
  https_port=$HTTPS_CHECK_PORT
  port_is_free "$https_port" || setup_failed "HTTPS_CHECK_PORT=$https_port is free on 127.0.0.1 (TCP and UDP)"
else
  https_port=""
  for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 10000))
    if port_is_free "$candidate"; then https_port=$candidate; break; fi
  done
  [[ -n $https_port ]] || setup_failed "a free port between 20000 and 29999 for Caddy (set HTTPS_CHECK_PORT)"
fi
# Caddy wants an HTTP port even with redirects off; it stays unbound, but never :80.
http_port=$(( https_port == 29999 ? 29998 : https_port + 1 ))
"${caddy_env[@]}" HTTPS_CHECK_PORT="$https_port" HTTPS_CHECK_HTTP_PORT="$http_port" HTTPS_CHECK_PROXY_PORT="$proxy_port" \
  caddy run --config "$script_dir/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 &
caddy_pid=$!
stop_on_exit "$caddy_pid"
base="https://127.0.0.1:$https_port"
root="$work/caddy-data/caddy/pki/authorities/local/root.crt"
ready=0
for _ in $(seq 1 300); do
  if [[ -f $root ]] && curl -s --cacert "$root" -o /dev/null "$base/healthz" 2>/dev/null; then ready=1; break; fi
  kill -0 "$caddy_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ $ready != 1 ]]; then
  tail -n 20 "$work/caddy.log" | sed 's/^/# /'
  setup_failed "Caddy serves HTTPS on 127.0.0.1:$https_port within 30 s (port taken meanwhile? set HTTPS_CHECK_PORT)"
fi
echo "# Caddy on $base, its root CA in $root ($(elapsed) s)"

# --- curl over HTTPS ----------------------------------------------------------------
auth=(-H "Authorization: Bearer $token")
result=$(curl -sS --cacert "$root" --http2 "${auth[@]}" -D "$work/head" -o "$work/body" \
  -w '%{http_version} %{http_code}' "$base/3/trending/movie/week" 2>"$work/curl.err") || true
if [[ $result == "2 200" ]] && python3 -c "import json, sys; sys.exit(0 if len(json.load(open(sys.argv[1]))['results']) == 20 else 1)" "$work/body"; then
  ok "curl trusting Caddy's CA gets /3/trending/movie/week over HTTP/2: 200 with 20 results"
else
  not_ok "curl gets /3/trending/movie/week over HTTP/2 (got '$result': $(cat "$work/curl.err"))"
fi
alt_svc=$(grep -i '^alt-svc:' "$work/head" | tr -d '\r' || true)
# The port was free before Caddy started: if UDP is taken now, Caddy listens for QUIC.
if [[ $alt_svc == *"h3=\":$https_port\""* ]] && ! port_is_free "$https_port" udp; then
  ok "Caddy advertises HTTP/3 ($alt_svc) and holds UDP $https_port"
else
  not_ok "Caddy advertises HTTP/3 on UDP $https_port (alt-svc: ${alt_svc:-none})"
fi
# What apps rely on passes through Caddy untouched: Cache-Status, and ETag revalidation.
etag=$(grep -i '^etag:' "$work/head" | cut -d' ' -f2- | tr -d '\r' || true)
result=$(curl -sS --cacert "$root" --http2 "${auth[@]}" -H "If-None-Match: $etag" -D "$work/head2" -o /dev/null \
  -w '%{http_code}' "$base/3/trending/movie/week" 2>&1 || true)
if [[ -n $etag && $result == 304 ]] && grep -qi '^cache-status: amodb-proxy; hit' "$work/head2"; then
  ok "through Caddy the next call is a cache hit, and If-None-Match: $etag gives 304"
else
  not_ok "through Caddy: a cache hit and 304 for If-None-Match (ETag '${etag}', got $result)"
fi
if ! curl -sS "${auth[@]}" -o /dev/null "$base/healthz" 2>"$work/untrusted.err"; then
  ok "without Caddy's CA curl refuses the certificate ($(head -n 1 "$work/untrusted.err"))"
else
  not_ok "without Caddy's CA curl refuses the certificate"
fi
libcurl_bundle=$(sed -n 's/^\*  CAfile: //p' <(curl -sv -o /dev/null "$base/healthz" 2>&1 || true) | head -n 1)

status=$(curl -sS --cacert "$root" -o "$work/body" -w '%{http_code}' "$base/3/movie/550" 2>&1 || true)
if [[ $status == 401 ]] && grep -q '"status_message"' "$work/body"; then
  ok "without a client token: 401 with a JSON status_message, through Caddy"
else
  not_ok "without a client token: 401 JSON through Caddy (got $status)"
fi
for private in /metrics /status /status.json; do
  direct=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$proxy_port$private" || true)
  public=$(curl -s --cacert "$root" -o /dev/null -w '%{http_code}' "$base$private" || true)
  if [[ $direct == 200 && $public == 404 ]]; then
    ok "$private: 200 from the proxy directly, 404 through Caddy"
  else
    not_ok "$private private: 200 directly ($direct), 404 through Caddy ($public)"
  fi
done

# --- the real client in the access log ------------------------------------------------
# curl connects from 127.0.0.2 and forges both forwarding headers: Caddy (which trusts
# no proxy itself) replaces X-Forwarded-For with 127.0.0.2 and passes Forwarded through;
# the proxy believes X-Forwarded-For from 127.0.0.1 only, and never Forwarded.
status=$(curl -sS --interface 127.0.0.2 --cacert "$root" "${auth[@]}" \
  -H 'X-Forwarded-For: 203.0.113.66' -H 'Forwarded: for=203.0.113.77' -H 'X-Real-IP: 203.0.113.88' \
  -o /dev/null -w '%{http_code}' "$base/3/movie/550" 2>"$work/curl.err" || true)
logged=0
for _ in $(seq 1 50); do   # the access log is written every 100 ms
  if grep -q '"route":"/3/movie/{movie_id}","key":"/movie/550","status":200.*"client":"127.0.0.2"' "$access_log"; then logged=1; break; fi
  sleep 0.1
done
if [[ $status == 200 && $logged == 1 ]] && ! grep -q '203\.0\.113\.' "$access_log"; then
  ok "the access log names the real client 127.0.0.2 (from Caddy's X-Forwarded-For), not Caddy's 127.0.0.1 nor a forged address"
else
  not_ok "the access log names the real client 127.0.0.2 (status $status)"
  grep '/3/movie' "$access_log" | tail -n 3 | sed 's/^/# /'
fi

# --- AmodbClient (URLSession) ---------------------------------------------------------
echo "# swift build --build-tests ($(elapsed) s)"
swift build --build-tests >"$work/test-build.log" 2>&1 || { tail -n 30 "$work/test-build.log"; setup_failed "test build"; }
client_test=(env AMODB_HTTPS_CHECK_URL="$base/3" AMODB_HTTPS_CHECK_TOKEN="$token"
  swift test --skip-build --filter HTTPSPathTests.amodbClientFetchesThroughTheTLSTerminatorTrustingItsCA)
test_name='amodbClientFetchesThroughTheTLSTerminatorTrustingItsCA()'
# libcurl's bundle plus Caddy's root, mounted over the bundle for the test process only.
libcurl_bundle=${libcurl_bundle:-/etc/ssl/certs/ca-certificates.crt}
[[ -f $libcurl_bundle ]] || setup_failed "libcurl's CA bundle $libcurl_bundle exists (apt-get install ca-certificates)"
cat "$libcurl_bundle" "$root" >"$work/bundle.pem"
if [[ $EUID == 0 ]]; then namespace=(unshare --mount --propagation private); else namespace=(unshare --user --map-root-user --mount --propagation private); fi
if "${namespace[@]}" sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$work/bundle.pem" "$libcurl_bundle" \
  "${client_test[@]}" >"$work/trusted.log" 2>&1 && grep -q "Test $test_name passed" "$work/trusted.log"; then
  ok "AmodbClient (URLSession) fetches trending and a movie through Caddy, with its CA in the bundle libcurl reads"
else
  not_ok "AmodbClient (URLSession) fetches through Caddy with its CA trusted"
  grep -E '✘|error:|➜' "$work/trusted.log" | head -n 10 | sed 's/^/# /'
fi
# FoundationNetworking reports libcurl's certificate error as URL error -1 (unknown), so
# AmodbClient's message is the generic transport one.
if ! "${client_test[@]}" >"$work/untrusted-client.log" 2>&1 \
  && grep -qE "Test ${test_name%()}\\(\\) recorded an issue.*Caught error: (A secure connection to|The request to) the server 127.0.0.1" "$work/untrusted-client.log"; then
  ok "without the CA the same test fails with a transport error (TLS verification is on)"
else
  not_ok "without the CA the HTTPS client test fails with a TLS error"
  grep -E '✘|✔|➜' "$work/untrusted-client.log" | head -n 5 | sed 's/^/# /'
fi

# The sandbox's key ("sandbox-key", AmodbSandbox.Configuration) never leaves the proxy.
if ! grep -q 'sandbox-key' "$access_log" "$events_log" "$work/caddy.log" "$work/body" "$work/head"; then
  ok "the key appears in no log line and no answer"
else
  not_ok "the key appears in no log line and no answer"
fi

echo "# total $(elapsed) s"
finish
