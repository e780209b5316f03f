#!/usr/bin/env bash
# The operator's pages in a real browser (headless Chromium), checked for what a person sees:
#   - `amodb-proxy --sandbox` on a plan of 20 calls a minute gets traffic (hits, misses, and
#     misses past the plan's limit, refused with 503); then Chromium loads `/status`, whose
#     script reads `/status.json` and draws the page. Checks: every number the page shows
#     is the value of its field in the JSON the page read, and that JSON says what
#     `/status.json` says when fetched beside it; the chart has bars and the calls' line; the
#     paths that missed are listed; the words say what they count (calls to amodb, requests),
#     both of the chart's scales are titled; Chromium logged no console message (a script
#     error or a Content-Security-Policy refusal would be one) and the page shows no error;
#   - the same page through a relay that passes its first read of `/status.json` (with a
#     fleet and a key set with a skipped key written in) and then drops every read, as a dead
#     proxy would: the page says at the top that the proxy is not answering and since when,
#     marks its figures stale, labels this replica's figures and says which key was skipped
#     and why;
#   - `amodb-proxy plan --html` on a generated six-hour access log writes a page; Chromium
#     loads it from the file: a row per plan and TTL with its bars and refusals' line, and the
#     recommendation; no console message.
#
# Usage: bash Tests/Browser/status.sh [--screenshots]
# --screenshots also writes docs/images/status.png and docs/images/plan-report.png (the
# README's), taken by `chromium --headless --screenshot` from the same pages.
# Needs swift, python3 and Chromium (CHROMIUM=path to use another). Every server listens
# on loopback on a port the OS picks and is stopped on exit. Prints `ok - …` / `not ok - …`,
# then `N passed, N failed`; exits 1 if a check failed, 2 if the setup failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=Tests/lib/checks.sh
source "$script_dir/../lib/checks.sh"
enter_repo
screenshots=false
[[ ${1:-} == --screenshots ]] && screenshots=true

begin_checks
find_chromium
require_tools python3
build_debug_proxy

# A plan of 20 calls a minute, so that the traffic below spends it and some misses are refused.
start_sandboxed_proxy AMODB_RATE_LIMIT=20 AMODB_MISS_WAIT=0.2
proxy="http://127.0.0.1:$proxy_port"
echo "# amodb-proxy --sandbox on $proxy, AMODB_RATE_LIMIT=20"

# Traffic: a few hot paths asked often (hits), and 30 movies asked once or twice (misses,
# the last ones past the plan's 20 calls: refused).
python3 - "$proxy" >"$work/traffic.txt" <<'PY' || setup_failed "the traffic ran (python3)"
import sys, urllib.error, urllib.request
proxy = sys.argv[1]
statuses = {}
def get(path):
    try:
        with urllib.request.urlopen(proxy + path, timeout=10) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    statuses[status] = statuses.get(status, 0) + 1
hot = ["/3/trending/movie/week", "/3/trending/all/day", "/3/configuration", "/3/movie/550"]
for round in range(12):
    for path in hot:
        get(path)
    for movie in range(round * 3, round * 3 + 3):
        get(f"/3/movie/{600 + movie}")
get("/3/movie/640")
get("/3/movie/640")
print(" ".join(f"{status}:{count}" for status, count in sorted(statuses.items())))
PY
echo "# traffic: statuses $(cat "$work/traffic.txt")"

chromium_run() {
  # A profile of its own per run (headless_chromium); console messages go to stderr
  # (--enable-logging), into $work/NAME.err, where the checks look for them.
  local name=$1
  shift
  headless_chromium "$name" --enable-logging=stderr --v=0 "$@"
}

echo "# headless Chromium: $("$chromium" --version 2>/dev/null | head -1)"
status_json() { python3 -c "import sys,urllib.request;sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" "$proxy/status.json"; }
# A fill's br variant is stored after its answer, adding to the cache's bytes: the figures
# are read once no compression job is queued or running.
python3 - "$proxy/metrics" <<'PY' || setup_failed "the compression queue empties after the traffic"
import re, sys, time, urllib.request
for _ in range(300):
    text = urllib.request.urlopen(sys.argv[1]).read().decode()
    if re.search(r"^amodb_proxy_variant_queue_jobs 0$", text, re.M): sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
status_json >"$work/before.json"
# The virtual time budget lets the page's fetch and drawing finish; it stops before the
# page's next refresh would run more than once or twice.
chromium_run status --virtual-time-budget=3000 --dump-dom "$proxy/status" >"$work/status.html"
status_json >"$work/after.json"

# The page when the proxy stops answering: a relay on another port passes /status and the
# first read of /status.json (a fleet and a key set written in, so their labels show), then
# drops each later read without a reply, as a proxy that died would. The page reads again
# every 5 s: the virtual time budget lets two reads fail.
cat >"$work/relay.py" <<'PY'
import http.server, json, socket, sys, urllib.request
proxy, port_file = sys.argv[1], sys.argv[2]
reads = {"status.json": 0}
class Relay(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def do_GET(self):
        if self.path.startswith("/status.json"):
            reads["status.json"] += 1
            if reads["status.json"] > 1:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            document = json.loads(urllib.request.urlopen(proxy + "/status.json").read())
            document["fleet"] = {"redis": "up", "replicas": 2, "outage": False}
            document["key_set"] = {"key_ids": ["rsa-1"], "skipped": 1, "problem": None, "skipped_keys": [
                {"kid": "for-encryption", "index": 1, "reason": "its use is \"enc\", not sig"}]}
            body, headers = json.dumps(document).encode(), {"Content-Type": "application/json"}
        else:
            with urllib.request.urlopen(proxy + self.path) as answer:
                body, headers = answer.read(), dict(answer.headers)
        self.send_response(200)
        for name in ("Content-Type", "Content-Security-Policy", "Cache-Control"):
            if name in headers: self.send_header(name, headers[name])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
open(port_file, "w").write(f"relay listening on {server.server_address[1]}\n")
server.serve_forever()
PY
python3 "$work/relay.py" "$proxy" "$work/relay.out" 2>"$work/relay.err" &
relay_pid=$!
stop_on_exit "$relay_pid"
relay_port=$(port_in_output "$relay_pid" "$work/relay.out" 'listening on [0-9]*')
[[ -n $relay_port ]] || { indented "$work/relay.err"; setup_failed "the relay for the dead-proxy page starts"; }
chromium_run down --virtual-time-budget=12000 --dump-dom "http://127.0.0.1:$relay_port/status" >"$work/down.html"
stop "$relay_pid"
if $screenshots; then
  mkdir -p docs/images
  chromium_run status-shot --virtual-time-budget=3000 --window-size=1000,1020 --hide-scrollbars \
    --screenshot="$repo/docs/images/status.png" "$proxy/status" >/dev/null
fi

# Stopped before its access log is read: the log's writer flushes on shutdown.
stop "$proxy_pid"

# --- the plan report, from a generated six-hour log -----------------------------------------
python3 - "$work/six-hours.log" <<'PY' || setup_failed "the access log was generated (python3)"
import json, random, sys
random.seed(7)
start = 1796292000  # 2026-12-03 08:00:00 UTC
lines = []
t = float(start)
while t < start + 6 * 3600:
    hour = (t - start) / 3600
    # A busy stretch in the middle of the day: five requests a second, else one.
    rate = 5.0 if 2.5 <= hour < 3.5 else 1.0
    t += random.expovariate(rate)
    draw = random.random()
    if draw < 0.3:
        key, route = "/trending/movie/week", "/3/trending/{media_type}/{time_window}"
    elif rate > 1 and draw < 0.6:
        # The busy stretch reaches into the catalogue's long tail: a miss a request, 90 a minute.
        key, route = f"/movie/{random.randrange(10_000, 1_000_000)}", "/3/movie/{movie_id}"
    else:
        key, route = f"/movie/{int(random.paretovariate(0.6)) + 100}", "/3/movie/{movie_id}"
    stamp = __import__("time").strftime("%Y-%m-%dT%H:%M:%S", __import__("time").gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)
    lines.append(json.dumps({"time": stamp, "method": "GET", "route": route, "key": key, "status": 200,
        "cache": "hit", "duration_ms": 0.1, "bytes": 900, "encoding": "identity", "client": "203.0.113.7"},
        separators=(",", ":")))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
"$binary" plan --access-log "$work/six-hours.log" --plans 20,40,120 --movie-ttls 1800,21600 --html "$work/report.html" \
  >"$work/plan.txt" 2>"$work/plan.err" || { indented "$work/plan.err"; setup_failed "amodb-proxy plan --html writes the page"; }
chromium_run report --dump-dom "file://$work/report.html" >"$work/report.dom.html"
if $screenshots; then
  chromium_run report-shot --window-size=1100,520 --hide-scrollbars --screenshot="$repo/docs/images/plan-report.png" \
    "file://$work/report.html" >/dev/null
fi

# --- what the pages showed ---------------------------------------------------------------------
checks=$(python3 - "$work" <<'PY'
import html, json, re, sys
work = sys.argv[1]
def check(name, condition, detail=None):
    print(("ok - " if condition else "not ok - ") + name + ("" if condition else "\n#   saw: " + json.dumps(detail)[:2000]))

def console(name):
    # Chromium's console messages (errors, CSP refusals, warnings) with --enable-logging.
    text = open(f"{work}/{name}.err", encoding="utf-8", errors="replace").read()
    return [line for line in text.splitlines() if "CONSOLE" in line or "Content Security Policy" in line or "Uncaught" in line]

dom = open(f"{work}/status.html", encoding="utf-8", errors="replace").read()
before = json.load(open(f"{work}/before.json"))
after = json.load(open(f"{work}/after.json"))
found = re.search(r'<body[^>]*data-rendered="([^"]*)"', dom)
rendered = json.loads(html.unescape(found.group(1))) if found else None
check("the status page's script ran and drew what it read from /status.json", rendered is not None, dom[-1500:])
if rendered is not None:
    def field(path):
        value = rendered
        for name in path.split("."):
            value = None if value is None else value.get(name)
        return value
    def shown(value, fmt):
        if value is None: return "–"
        if fmt == "percent": return f"{value * 100:.1f}%"
        return None if fmt else str(value)
    shown_fields = re.findall(r'<(?:span|dd)[^>]*data-field="([^"]+)"(?: data-format="([^"]+)")?[^>]*>([^<]*)<', dom)
    compared = [(path, text, shown(field(path), fmt)) for path, fmt, text in shown_fields if fmt in ("", "percent")]
    check("the page shows its numbers (budget, answers, hit ratio, cache entries, fleet)", len(compared) >= 12, shown_fields)
    wrong = [(path, text, want) for path, text, want in compared if html.unescape(text) != want]
    check("every number the page shows is its field's value in the JSON it read", not wrong, wrong)
    # The same figures as /status.json fetched beside the page (no traffic between them).
    stable = ["budget.limit", "budget.used", "answers.fresh", "answers.stale", "answers.filled", "answers.refused",
              "answers.hit_ratio", "cache.entries", "cache.bytes", "fleet.redis", "fleet.replicas"]
    def get(document, path):
        for name in path.split("."): document = document.get(name)
        return document
    differ = [(path, get(before, path), field(path), get(after, path)) for path in stable
              if not (get(before, path) == field(path) == get(after, path))]
    check("the page's figures are /status.json's", not differ, differ)
    answers = rendered["answers"]
    check("the traffic shows: fresh, filled and refused answers, calls spent to the plan's limit",
          answers["fresh"] > 0 and answers["filled"] > 0 and answers["refused"] > 0 and rendered["budget"]["used"] == 20, answers)
    bars = re.findall(r'<rect [^>]*class="bar (fresh|stale|filled|refused)"', dom)
    check("the chart is drawn: bars of fresh, filled and refused answers, the calls' line and the limit",
          {"fresh", "filled", "refused"} <= set(bars) and 'class="calls"' in dom and 'class="limit"' in dom, bars)
    listed = re.findall(r'<tr><td>(/[^<]*)</td><td class="n">(\d+)</td></tr>', dom)
    expected = [(entry["path"], str(entry["misses"])) for entry in rendered["missed_paths"]]
    check("the paths that missed most are listed as /status.json lists them", listed == expected and len(listed) == 10,
          {"listed": listed, "json": expected})
    check("the page shows no error", re.search(r'<span id="error"></span>', dom) is not None,
          re.search(r'<span id="error">[^<]*', dom).group(0) if re.search(r'<span id="error">[^<]*', dom) else None)
    check("a live proxy's page has no not-answering notice and nothing marked stale",
          re.search(r'<div id="down" role="alert" hidden=""', dom) is not None and 'data-state="live"' in dom
          and 'class="stale"' not in dom, re.search(r'<body[^>]*>', dom).group(0))
    terms = re.findall(r'<dt>([^<]*)', dom) + re.findall(r'<th[^>]*>([^<]*)</th>', dom)
    check("the budget counts calls to amodb and the paths table requests, in distinct words",
          {"calls refreshing stale entries", "calls filling missed paths", "calls refused by the budget"} <= set(terms)
          and "requests finding no stored answer (503s included)" in terms and "misses" not in terms, terms)
    titles = dict((kind, text) for kind, text in re.findall(r'<text [^>]*class="axis-title axis-(\w+)"[^>]*>([^<]*)<', dom))
    calls_scale = re.findall(r'<text [^>]*class="axis-calls"[^>]*>(\d+)<', dom)
    check("the chart's two scales are titled, the calls' on the right with its top value, and the limit labelled",
          titles == {"answers": "answers a minute", "calls": "calls to amodb a minute"} and len(calls_scale) == 2
          and re.search(r'class="limit-label"[^>]*>limit 20<', dom) is not None, {"titles": titles, "calls": calls_scale})
    check("without Redis no figure is labelled as one replica's",
          re.search(r'class="replica"(?! hidden)', dom) is None and re.search(r'class="muted replica"(?! hidden)', dom) is None,
          re.findall(r'<[^>]*class="[^"]*replica[^"]*"[^>]*>', dom))
check("Chromium logged no console message for the status page (script errors, CSP refusals)", not console("status"), console("status"))

down = open(f"{work}/down.html", encoding="utf-8", errors="replace").read()
notice = re.search(r'<div id="down" role="alert"( hidden="")?>([^<]*)</div>', down)
text_of_notice = html.unescape(notice.group(2)) if notice else ""
check("a dead proxy's page says at the top that it is not answering, since when, and that its figures are stale",
      notice is not None and notice.group(1) is None and "The proxy is not answering" in text_of_notice
      and re.search(r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text_of_notice) is not None
      and "stale" in text_of_notice, notice.group(0) if notice else down[-1500:])
body = re.search(r'<body[^>]*>', down).group(0) if re.search(r'<body[^>]*>', down) else ""
check("its figures are still shown, marked stale", 'class="stale"' in body and 'data-state="down"' in body
      and re.search(r'<span id="stale-mark">', down) is not None
      and re.search(r'<span class="big" data-field="budget.used">\d+<', down) is not None, body)
replica = re.findall(r'<span class="replica">([^<]*)</span>', down)
check("with Redis, this replica's figures say so (the budget, its remaining calls, answers, chart, cache, paths)",
      len(replica) == 6 and ", this replica's view" in replica and re.search(r'class="muted replica">With Redis', down) is not None,
      replica)
skipped = [html.unescape(item) for item in re.findall(r'<ul id="keyset-skipped"[^>]*>(.*?)</ul>', down, re.S)]
check("the key set's skipped key is named, with why", skipped == ['<li>skipped kid for-encryption: its use is "enc", not sig</li>'],
      skipped)

report = open(f"{work}/report.dom.html", encoding="utf-8", errors="replace").read()
text = open(f"{work}/plan.txt", encoding="utf-8").read()
table = [line.split() for line in text.split("plan/min", 1)[1].split("\n\n", 1)[0].splitlines()[1:] if line.strip()]
rows = re.findall(r'<tr class="row" data-plan="(\d+)" data-movie-ttl="(\d+)">(.*?)</tr>', report, re.S)
check("the plan report has a row per plan and TTL, as the text table", len(rows) == len(table) == 6,
      {"rows": len(rows), "table": table})
mismatch = []
for (plan, ttl, cells), line in zip(rows, table):
    shares = re.findall(r'data-share="\w+">([0-9.]+)<', cells)
    if plan != line[0] or shares != line[3:7]:
        mismatch.append((plan, shares, line))
    if "<rect" not in cells or "<polyline" not in cells:
        mismatch.append((plan, ttl, "no bar or no line"))
check("each row shows the table's shares as bars, and its refusals a minute as a line", not mismatch, mismatch)
refusing = [plan for plan, ttl, cells in rows if re.search(r'data-refused-total="([1-9]\d*)"', cells)]
lines = {plan: [float(point.split(",")[1]) for point in re.search(r'<polyline[^>]*points="([^"]*)"', cells).group(1).split()]
         for plan, ttl, cells in rows}
check("the busy hour makes the small plan refuse, and its line shows it", "20" in refusing and min(lines["20"]) < 31,
      {"refusing": refusing, "lowest points": {plan: min(points) for plan, points in lines.items()}})
recommendation = re.search(r'<p id="recommendation">([^<]+)</p>', report)
check("the report recommends in one sentence", recommendation is not None and recommendation.group(1).count(". ") == 0
      and recommendation.group(1).endswith("."), recommendation.group(1) if recommendation else report[:1500])
check("Chromium logged no console message for the plan report", not console("report"), console("report"))
PY
) || setup_failed "the checks ran (python3)"
count_checks "$checks"
((failed == 0)) || chromium_output status down report
if $screenshots; then echo "# screenshots: docs/images/status.png, docs/images/plan-report.png"; fi
echo "# $(elapsed) s"
finish
