#!/usr/bin/env bash
# Calls the proxy from a web page in a real browser (headless Chromium), as a web app
# using a TMDB client library does, and checks what the page could read:
#   - `amodb-proxy --sandbox` runs with an app token and
#     AMODB_CORS_ORIGINS=http://127.0.0.1:<page port>;
#   - Tests/Browser/page.html is served by `python3 -m http.server` from another origin
#     (another port) and fetch()es the proxy with the request shapes of tmdb-ts and its kin
#     (`Content-Type: application/json` on a GET), `Cache-Control: no-cache` and
#     `X-Firebase-AppCheck`, each of which makes the browser send a preflight; an unserved
#     path and a missing movie, whose 404 JSON the page must be able to read; a call
#     without the token (401); and a revalidation from the browser's own cache after the
#     br variant was made, which must be a 304 (the page keeps the tag it had);
#   - docs/signing-in.md's retry recipe for signed-in users (HS256 ID tokens): an expired
#     token's 401 says error="invalid_token" in WWW-Authenticate, which the page reads,
#     refreshes the token and retries once, and gets the movie;
#   - the same page from http://localhost:<page port>, an origin not in the list: a
#     preflighted fetch fails as a browser fails it ("Failed to fetch"); a simple one reads
#     the 403 that names the origin and AMODB_CORS_ORIGINS (and nothing else);
#   - Chromium runs with --headless=new --dump-dom: the page writes what it saw into the
#     DOM as JSON, and the checks read it there.
#
# Usage: bash Tests/Browser/run.sh
# Needs swift, python3 and Chromium (`apt-get install chromium`; CHROMIUM=path to use
# another Chromium or Chrome). Builds the debug amodb-proxy if it is not up to date. Every
# server listens on loopback on a port the OS picks, and is stopped on exit. Prints
# `ok - …` / `not ok - …`, then `N passed, N failed`; exits 1 if a check failed, 2 if the
# setup failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=Tests/lib/checks.sh
source "$script_dir/../lib/checks.sh"
enter_repo
begin_checks
find_chromium
require_tools python3

# --- the page, on an origin of its own -----------------------------------------------------
mkdir "$work/site"
cp "$script_dir/page.html" "$work/site/index.html"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/site" >"$work/page.out" 2>"$work/page.err" &
page_pid=$!
stop_on_exit "$page_pid"
page_port=$(port_in_output "$page_pid" "$work/page.out" 'port [0-9]*')
[[ -n $page_port ]] || { indented "$work/page.err"; setup_failed "python3 -m http.server serves the page"; }
page_origin="http://127.0.0.1:$page_port"
echo "# the page on $page_origin"

# --- the proxy: sandbox mode, an app token, CORS for the page's origin only ---------------
build_debug_proxy
token="browser-$RANDOM$RANDOM$RANDOM"
# Signed-in users too: ID tokens signed with a shared secret (HS256), one expired an hour
# ago and one fresh, as a provider hands them out before and after a forced refresh.
jwt_secret="browser-secret-$RANDOM$RANDOM$RANDOM$RANDOM$RANDOM"
read -r stale_token fresh_token < <(python3 - "$jwt_secret" <<'PY'
import base64, hashlib, hmac, json, sys, time
def part(value):
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
def token(expires):
    now = int(time.time())
    signed = part({"alg": "HS256", "typ": "JWT"}) + "." + part(
        {"sub": "browser-user", "iss": "https://issuer.example", "aud": "amodb-web", "iat": now - 7200, "exp": expires})
    mac = hmac.new(sys.argv[1].encode(), signed.encode(), hashlib.sha256).digest()
    return signed + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
print(token(int(time.time()) - 3600), token(int(time.time()) + 3600))
PY
)
start_sandboxed_proxy AMODB_PROXY_TOKENS="$token" AMODB_CORS_ORIGINS="$page_origin" \
  AMODB_JWT_SECRET="$jwt_secret" AMODB_JWT_ISSUER=https://issuer.example AMODB_JWT_AUDIENCE=amodb-web
proxy="http://127.0.0.1:$proxy_port"
echo "# amodb-proxy --sandbox on $proxy, AMODB_CORS_ORIGINS=$page_origin"

# visit NAME PAGE_URL: what the page saw, as JSON in $work/NAME.json ("" if it never finished).
visit() {
  local name=$1 url=$2
  # A profile of its own per visit (headless_chromium): nothing cached from the one before.
  # The virtual time budget runs only while no fetch is in flight, so it bounds the page's
  # own timers; `timeout` bounds the whole run.
  headless_chromium "$name" --virtual-time-budget=60000 --dump-dom "$url" >"$work/$name.html"
  python3 - "$work/$name.html" >"$work/$name.json" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
found = re.search(r'<pre id="results">(.*?)</pre>', dom, re.S)
print(html.unescape(found.group(1)) if found and "<title>done</title>" in dom else "")
PY
}

echo "# headless Chromium: $("$chromium" --version 2>/dev/null | head -1)"
visit allowed "$page_origin/index.html?mode=allowed&proxy=$proxy&token=$token&stale=$stale_token&fresh=$fresh_token"
visit refused "http://localhost:$page_port/index.html?mode=refused&proxy=$proxy&token=$token"

# Stopped before its access log is read: the log's writer flushes on shutdown.
stop "$proxy_pid"

# --- what the pages saw ----------------------------------------------------------------------
checks=$(python3 - "$work/allowed.json" "$work/refused.json" "$work/proxy.out" "$work/proxy.err" <<'PY'
import json, sys

def load(path):
    text = open(path, encoding="utf-8").read().strip()
    return json.loads(text) if text else None

allowed, refused = load(sys.argv[1]), load(sys.argv[2])
def lines(path):
    read = []
    for line in open(path, encoding="utf-8", errors="replace"):
        try:
            read.append(json.loads(line))
        except ValueError:
            pass
    return read
log, events = lines(sys.argv[3]), lines(sys.argv[4])

def check(name, condition, detail):
    print(("ok - " if condition else "not ok - ") + name + ("" if condition else "\n#   saw: " + json.dumps(detail)))

if allowed is None or "pageError" in allowed:
    check("the page from the allowed origin ran to its end", False, allowed)
else:
    for key, what, path in [
        ("contentType", "Content-Type: application/json (tmdb-ts, tmdb-wrapper, @lorenzopant/tmdb)", "/3/movie/550"),
        ("noCache", "Cache-Control: no-cache", "/3/trending/movie/week"),
        ("appCheck", "X-Firebase-AppCheck", "/3/configuration"),
    ]:
        seen = allowed[key]
        good = seen.get("status") == 200 and bool(seen.get("etag")) and bool(seen.get("cacheStatus"))
        if key == "contentType":
            good = good and seen.get("title") == "Fight Club"
        elif key == "noCache":
            good = good and (seen.get("resultCount") or 0) > 0
        else:
            good = good and seen.get("hasImages")
        check(f"a GET with {what} passes its preflight: {path} is read, with ETag and Cache-Status", good, seen)
    seen = allowed["unserved"]
    check(
        "the page reads the 404 of an unserved path and its message (/3/search/movie)",
        seen.get("status") == 404 and "does not serve /3/search/movie" in (seen.get("message") or ""), seen)
    seen = allowed["missing"]
    check(
        "the page reads the 404 of a movie amodb does not have, amodb's own message (/3/movie/1)",
        seen.get("status") == 404 and seen.get("message") == "The resource you requested could not be found.", seen)
    seen = allowed["noToken"]
    check("the page reads the 401 of a call without the app token", seen.get("status") == 401 and bool(seen.get("message")), seen)
    check(
        "the page reads the 401's WWW-Authenticate (exposed: a sign-in retry checks it for invalid_token)",
        (seen.get("challenge") or "").startswith("Bearer"), seen)
    seen = allowed["revalidation"]
    check(
        "after br is made, the browser's revalidation of its gzip copy keeps its tag (a 304)",
        (seen.get("first") or "").endswith('-gzip"') and (seen.get("later") or "").endswith('-br"')
        and seen.get("again") == seen.get("first") and seen.get("status") == 200, seen)
    seen = allowed["signIn"]
    check(
        "the sign-in retry recipe works in the browser: the expired token's 401 is read as invalid_token, one retry with a fresh token gets the movie",
        seen.get("first") == 401 and 'error="invalid_token"' in (seen.get("challenge") or "") and seen.get("retried")
        and seen.get("status") == 200 and seen.get("title") == "Fight Club", seen)
    revalidated = [e for e in log if e.get("key") == "/trending/tv/day" and e.get("status") == 304]
    check(
        "the proxy's access log has that 304, for the gzip variant",
        len(revalidated) == 1 and revalidated[0].get("encoding") == "gzip",
        [(e.get("status"), e.get("encoding")) for e in log if e.get("key") == "/trending/tv/day" and e.get("method") == "GET"])

if refused is None or "pageError" in refused:
    check("the page from an origin not in the list ran to its end", False, refused)
else:
    seen = refused["preflighted"]
    check("an origin not in the list cannot pass a preflight (fetch fails)", "Failed to fetch" in (seen.get("error") or ""), seen)
    for key, what in [("simple", "a GET of a movie"), ("unserved", "a GET of an unserved path")]:
        seen = refused[key]
        message = seen.get("message") or ""
        check(
            f"an origin not in the list reads why it is refused, and nothing else ({what}: 403 naming the origin and AMODB_CORS_ORIGINS)",
            seen.get("status") == 403 and "http://localhost:" in message and "AMODB_CORS_ORIGINS" in message
            and seen.get("title") is None, seen)
    refusals = [e for e in events if e.get("message", "").startswith("refused a web page's origin")]
    check(
        "the proxy's log names the refused origin once",
        len(refusals) == 1 and refusals[0].get("origin", "").startswith("http://localhost:"), refusals)
PY
) || setup_failed "the checks ran (python3)"
count_checks "$checks"
((failed == 0)) || chromium_output allowed refused

echo "# $(elapsed) s"
finish
