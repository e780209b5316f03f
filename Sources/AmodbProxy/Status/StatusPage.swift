import AmodbHTTP

/// `/status` and `/status.json`: the operator's page and its JSON twin, on the listener
/// `/metrics` is on and protected as it is (keep that port private; docs/security.md).
///
/// The page is one self-contained document: no external script, style, font or image,
/// no build step. Its one inline script fetches `/status.json` (every `refreshSeconds`) and
/// draws the numbers and an inline SVG chart from it; it reads nothing else. When a read
/// fails, the page says at the top that the proxy is not answering, since when, and greys
/// the figures it still shows as stale: a dead proxy must not look like a quiet one. With
/// Redis, the figures that are this replica's say so (the fleet's window is in Redis). A strict
/// `Content-Security-Policy` lets only that script and style run, by a nonce made per
/// answer, and lets the page connect only to its own origin.
enum StatusPage {
    /// Seconds between the page's reads of `/status.json`.
    static let refreshSeconds = 5

    /// The answer to `/status` (`route` `.status`) or `/status.json` (`.statusJSON`).
    static func response(json: Bool, metrics: ProxyMetrics) -> HTTPResponse {
        var response: HTTPResponse
        if json {
            guard let document = StatusDocument(metrics) else {
                return APIRefusal(.starting, "The proxy is starting; its status is not available yet.").response
            }
            response = .json(200, document.json())
        } else {
            let nonce = Self.nonce()
            response = HTTPResponse(status: 200, body: Array(page(nonce: nonce).utf8))
            response.headers.set("Content-Type", "text/html;charset=utf-8")
            response.headers.set("Content-Security-Policy", policy(nonce: nonce))
            response.headers.set("X-Content-Type-Options", "nosniff")
            response.headers.set("Referrer-Policy", "no-referrer")
        }
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// Nothing but the page's own script and style, and reads from its own origin.
    static func policy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
            + "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// 128 random bits as 32 hex digits (`SystemRandomNumberGenerator`: the kernel's
    /// random source), new for every answer, so a page cannot be made to run another script.
    static func nonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    /// The page, its script and style carrying `nonce`.
    static func page(nonce: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>amodb-proxy status</title>
        <style nonce="\(nonce)">
        body { font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 960px; padding: 16px; color: #1b1f24; background: #fff; }
        [hidden] { display: none !important; }
        h1 { font-size: 20px; margin: 0 0 4px; }
        h2 { font-size: 15px; margin: 0 0 8px; }
        .muted { color: #57606a; }
        .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(210px, 1fr)); gap: 12px; margin: 12px 0; }
        section { border: 1px solid #d0d7de; border-radius: 6px; padding: 12px; }
        .big { font-size: 28px; font-weight: 600; }
        .meter { height: 8px; background: #eaeef2; border-radius: 4px; overflow: hidden; margin: 6px 0; }
        .meter > div { height: 100%; background: #0969da; width: 0; }
        .meter.full > div { background: #cf222e; }
        dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0; }
        dt { color: #57606a; } dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
        table { border-collapse: collapse; width: 100%; }
        td, th { padding: 3px 6px; border-bottom: 1px solid #eaeef2; text-align: left; }
        td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
        .key { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; border-radius: 2px; }
        .fresh { background: #2da44e; } .stale { background: #d4a72c; } .filled { background: #0969da; } .refused { background: #cf222e; }
        .calls { background: #1b1f24; height: 2px; vertical-align: middle; }
        #error { color: #cf222e; }
        #down { border: 2px solid #cf222e; border-radius: 6px; background: #ffebe9; color: #82071e; font-weight: 600; padding: 8px 12px; margin: 12px 0; }
        body.stale section { opacity: 0.45; filter: grayscale(1); }
        #stale-mark { color: #cf222e; font-weight: 600; }
        #keyset-skipped { margin: 4px 0 0; padding-left: 18px; font-size: 12px; }
        svg { width: 100%; height: auto; display: block; }
        </style>
        </head>
        <body>
        <h1>amodb-proxy status</h1>
        <div class="muted">Read <span id="updated">…</span><span id="stale-mark" hidden> (stale)</span>; refreshed every \(refreshSeconds) s from <a href="status.json">status.json</a>. <span id="error"></span></div>
        <div id="down" role="alert" hidden></div>
        <div class="grid">
        <section><h2>Budget, last 60 s<span class="replica" hidden>: this replica</span></h2>
        <div><span class="big" data-field="budget.used">–</span> <span class="muted">of</span> <span data-field="budget.limit">–</span> <span class="muted">calls to amodb</span></div>
        <div class="meter" id="meter"><div></div></div>
        <dl><dt>calls refreshing stale entries</dt><dd data-field="budget.refreshes">–</dd><dt>calls filling missed paths</dt><dd data-field="budget.misses">–</dd><dt>calls refused by the budget</dt><dd data-field="budget.refused">–</dd><dt>calls remaining<span class="replica" hidden>, this replica's view</span></dt><dd data-field="budget.remaining">–</dd></dl>
        <div class="muted replica" hidden>With Redis the replicas share one window: these are this replica's calls, and what remains as this replica sees it.</div>
        <div id="paused" class="muted" hidden></div>
        </section>
        <section><h2>Answers, last hour<span class="replica" hidden>: this replica</span></h2>
        <div><span class="big" data-field="answers.hit_ratio" data-format="percent">–</span> <span class="muted">without a call</span></div>
        <dl><dt>fresh</dt><dd data-field="answers.fresh">–</dd><dt>stale</dt><dd data-field="answers.stale">–</dd><dt>filled</dt><dd data-field="answers.filled">–</dd><dt>refused (503)</dt><dd data-field="answers.refused">–</dd></dl>
        </section>
        <section><h2>Cache<span class="replica" hidden>: this replica</span></h2>
        <dl><dt>entries</dt><dd data-field="cache.entries">–</dd><dt>bytes</dt><dd data-field="cache.bytes" data-format="bytes">–</dd><dt>of</dt><dd data-field="cache.max_bytes" data-format="bytes">–</dd><dt>oldest</dt><dd data-field="cache.oldest_age_seconds" data-format="age">–</dd></dl>
        </section>
        <section><h2>Fleet</h2>
        <dl><dt>Redis</dt><dd data-field="fleet.redis">–</dd><dt>replicas</dt><dd data-field="fleet.replicas">–</dd></dl>
        <h2 id="keyset-title" hidden>Key set</h2>
        <dl id="keyset" hidden><dt>keys</dt><dd id="keyset-keys">–</dd><dt>skipped (not usable)</dt><dd data-field="key_set.skipped">–</dd><dt>problem</dt><dd id="keyset-problem">–</dd></dl>
        <ul id="keyset-skipped" class="muted" hidden></ul>
        </section>
        </div>
        <section><h2>The last hour, per minute<span class="replica" hidden>: this replica</span></h2>
        <div class="muted"><span class="key fresh"></span>fresh<span class="key stale"></span>stale<span class="key filled"></span>filled<span class="key refused"></span>refused (answers, bars: scale on the left)<span class="key calls"></span>calls to amodb (line: scale on the right; dashed: the plan's limit)</div>
        <svg id="chart" viewBox="0 0 760 232" role="img" aria-label="answers and calls per minute"></svg>
        </section>
        <section id="proofs-section" hidden><h2>Requests by proof of a genuine app, since the start</h2>
        <table><thead><tr><th>proof</th><th class="n">served</th><th class="n">refused</th><th class="n">served, would be refused (monitor)</th></tr></thead><tbody id="proofs"></tbody></table>
        </section>
        <section><h2>Paths most often not in the cache, since the start<span class="replica" hidden>: this replica</span></h2>
        <table><thead><tr><th>path (under /3)</th><th class="n">requests finding no stored answer (503s included)</th></tr></thead><tbody id="missed"><tr><td class="muted" colspan="2">none yet</td></tr></tbody></table>
        </section>
        <script nonce="\(nonce)">
        "use strict";
        const svgNS = "http://www.w3.org/2000/svg";
        function read(data, path) { return path.split(".").reduce((value, name) => value == null ? null : value[name], data); }
        function bytes(value) {
          const units = ["B", "KiB", "MiB", "GiB"]; let unit = 0;
          while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
          return (unit === 0 ? String(value) : value.toFixed(1)) + " " + units[unit];
        }
        function age(seconds) {
          if (seconds < 90) return Math.round(seconds) + " s";
          if (seconds < 5400) return Math.round(seconds / 60) + " min";
          return (seconds / 3600).toFixed(1) + " h";
        }
        function shown(value, format) {
          if (value == null) return "–";
          if (format === "percent") return (value * 100).toFixed(1) + "%";
          if (format === "bytes") return bytes(value);
          if (format === "age") return age(value);
          return String(value);
        }
        function element(name, attributes) {
          const made = document.createElementNS(svgNS, name);
          for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, String(value));
          return made;
        }
        function chart(data) {
          const svg = document.getElementById("chart");
          svg.replaceChildren();
          const left = 40, top = 22, width = 700, height = 180, slot = width / 60;
          const minutes = data.minutes.slice(-60);
          const offset = 60 - minutes.length;
          const most = Math.max(1, ...minutes.map(m => m.fresh + m.stale + m.filled + m.refused));
          const callsScale = Math.max(1, data.budget.limit, ...minutes.map(m => m.calls));
          svg.append(element("line", { x1: left, y1: top + height, x2: left + width, y2: top + height, stroke: "#8c959f" }));
          // Two scales: answers (bars) on the left, calls to amodb (the line) on the right, each titled.
          const label = (text, attributes) => {
            const made = element("text", Object.assign({ "font-size": 11, fill: "#57606a" }, attributes));
            made.textContent = text;
            svg.append(made);
          };
          label("answers a minute", { x: left, y: 12, class: "axis-title axis-answers" });
          label(String(most), { x: left - 6, y: top + 10, "text-anchor": "end", class: "axis-answers" });
          label("0", { x: left - 6, y: top + height, "text-anchor": "end", class: "axis-answers" });
          label("calls to amodb a minute", { x: left + width, y: 12, "text-anchor": "end", class: "axis-title axis-calls" });
          label(String(callsScale), { x: left + width + 4, y: top + 10, class: "axis-calls" });
          label("0", { x: left + width + 4, y: top + height, class: "axis-calls" });
          const colours = { fresh: "#2da44e", stale: "#d4a72c", filled: "#0969da", refused: "#cf222e" };
          minutes.forEach((minute, index) => {
            let base = top + height;
            const x = left + (offset + index) * slot + 1;
            for (const kind of ["fresh", "stale", "filled", "refused"]) {
              if (minute[kind] === 0) continue;
              const h = minute[kind] / most * height;
              base -= h;
              const bar = element("rect", { x, y: base, width: slot - 2, height: h, fill: colours[kind], class: "bar " + kind });
              const title = element("title", {});
              title.textContent = new Date(minute.start * 1000).toISOString().slice(11, 16) + " UTC: " + minute[kind] + " " + kind;
              bar.append(title);
              svg.append(bar);
            }
          });
          const limitY = top + height - data.budget.limit / callsScale * height;
          svg.append(element("line", { x1: left, y1: limitY, x2: left + width, y2: limitY, stroke: "#1b1f24", "stroke-dasharray": "4 4", class: "limit" }));
          label("limit " + data.budget.limit, { x: left + width - 4, y: limitY - 4, "text-anchor": "end", class: "limit-label" });
          const points = minutes.map((minute, index) =>
            (left + (offset + index + 0.5) * slot).toFixed(1) + "," + (top + height - minute.calls / callsScale * height).toFixed(1));
          if (points.length === 1) points.push((left + (offset + 1) * slot).toFixed(1) + "," + points[0].split(",")[1]);
          svg.append(element("polyline", { points: points.join(" "), fill: "none", stroke: "#1b1f24", "stroke-width": 2, class: "calls" }));
          const start = element("text", { x: left, y: top + height + 18, "font-size": 11, fill: "#57606a" });
          start.textContent = "-60 min";
          const end = element("text", { x: left + width, y: top + height + 18, "text-anchor": "end", "font-size": 11, fill: "#57606a" });
          end.textContent = "now";
          svg.append(start, end);
        }
        function render(data) {
          for (const field of document.querySelectorAll("[data-field]")) {
            field.textContent = shown(read(data, field.dataset.field), field.dataset.format);
          }
          const meter = document.getElementById("meter");
          meter.firstElementChild.style.width = Math.min(100, data.budget.used / Math.max(1, data.budget.limit) * 100) + "%";
          meter.classList.toggle("full", data.budget.remaining === 0);
          const paused = document.getElementById("paused");
          const why = { redis_unreachable: "Redis is unreachable", budget_lost: "the fleet's budget was lost", budget_starting: "the fleet's budget is starting" };
          paused.hidden = data.budget.paused == null;
          paused.textContent = data.budget.paused == null ? "" : "Calls to amodb paused (" + (why[data.budget.paused] || data.budget.paused) + "): only this replica's reserve is spent; resuming in about " + data.budget.paused_seconds + " s.";
          const keySet = data.key_set != null;
          const proofs = document.getElementById("proofs");
          document.getElementById("proofs-section").hidden = data.proofs == null;
          proofs.replaceChildren();
          for (const entry of data.proofs || []) {
            const row = document.createElement("tr");
            for (const [text, number] of [[entry.proof, false], [entry.served, true], [entry.refused, true], [entry.would_refuse, true]]) {
              const cell = document.createElement("td");
              if (number) cell.className = "n";
              cell.textContent = String(text);
              row.append(cell);
            }
            proofs.append(row);
          }
          document.getElementById("keyset").hidden = !keySet;
          document.getElementById("keyset-title").hidden = !keySet;
          const skippedKeys = document.getElementById("keyset-skipped");
          skippedKeys.replaceChildren();
          if (keySet) {
            document.getElementById("keyset-keys").textContent = data.key_set.key_ids.join(", ") || "none";
            document.getElementById("keyset-problem").textContent = data.key_set.problem || "none";
            for (const key of data.key_set.skipped_keys || []) {
              const item = document.createElement("li");
              item.textContent = "skipped " + (key.kid != null ? "kid " + key.kid : "key #" + key.index) + ": " + key.reason;
              skippedKeys.append(item);
            }
          }
          skippedKeys.hidden = skippedKeys.childElementCount === 0;
          // With Redis the window is the fleet's, in Redis: the figures here are this replica's.
          const fleet = data.fleet.redis !== "off";
          for (const mark of document.querySelectorAll(".replica")) mark.hidden = !fleet;
          const missed = document.getElementById("missed");
          missed.replaceChildren();
          for (const entry of data.missed_paths) {
            const row = document.createElement("tr");
            const path = document.createElement("td");
            path.textContent = entry.path;
            const count = document.createElement("td");
            count.className = "n";
            count.textContent = String(entry.misses);
            row.append(path, count);
            missed.append(row);
          }
          if (data.missed_paths.length === 0) {
            const row = document.createElement("tr");
            const cell = document.createElement("td");
            cell.colSpan = 2; cell.className = "muted"; cell.textContent = "none yet";
            row.append(cell); missed.append(row);
          }
          chart(data);
          document.getElementById("updated").textContent = new Date(data.time * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
          document.body.dataset.rendered = JSON.stringify(data);
        }
        function utc(milliseconds) { return new Date(milliseconds).toISOString().replace("T", " ").slice(0, 19) + " UTC"; }
        // When the first read that failed was made, while reads fail; null while the proxy answers.
        let failingSince = null;
        function answering() {
          failingSince = null;
          document.getElementById("error").textContent = "";
          document.getElementById("down").hidden = true;
          document.getElementById("stale-mark").hidden = true;
          document.body.classList.remove("stale");
          document.body.dataset.state = "live";
        }
        function notAnswering(error) {
          const now = Date.now();
          if (failingSince == null) failingSince = now;
          const reason = String(error.message || error);
          const read = document.body.dataset.rendered != null;
          const down = document.getElementById("down");
          down.textContent = "The proxy is not answering: no reply to status.json since " + utc(failingSince)
            + " (" + Math.round((now - failingSince) / 1000) + " s; " + reason + "). "
            + (read ? "The figures below are stale: they are from " + document.getElementById("updated").textContent + "." : "No figures have been read yet.");
          down.hidden = false;
          document.getElementById("stale-mark").hidden = !read;
          document.getElementById("error").textContent = reason;
          document.body.classList.add("stale");
          document.body.dataset.state = "down";
        }
        async function refresh() {
          try {
            const response = await fetch("status.json", { cache: "no-store" });
            if (!response.ok) throw new Error("status.json: HTTP " + response.status);
            render(await response.json());
            answering();
          } catch (error) {
            notAnswering(error);
          }
        }
        refresh();
        setInterval(refresh, \(refreshSeconds * 1000));
        </script>
        </body>
        </html>

        """
    }
}
