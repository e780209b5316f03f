import AmodbProxy

/// `amodb-proxy plan --html FILE`: the planner's answer as one self-contained page. Per plan
/// and movie TTL, the shares of answers fresh, stale, filled and refused as a stacked bar,
/// and the log's refused requests per minute as a line; above them, the recommendation in
/// one sentence. Drawn here as inline SVG: the page has no script, style sheet, font or
/// image from anywhere, and opens from a file or a mail attachment as it is.
enum PlanHTMLReport {
    /// The refused share a recommended plan stays under, in percent.
    static let acceptedRefusedPercent = 1.0
    /// Most points a row's line has: longer logs are drawn by the busiest minute of each stretch.
    static let maxPoints = 1440

    /// The row a cheap operator would pick: the smallest plan with a row refusing under
    /// `acceptedRefusedPercent`, and of its rows the one refusing least, then serving least
    /// stale, then with the shortest TTL; if no row refuses that little, the one refusing least.
    static func recommended(_ rows: [PlanReport.Row]) -> (row: PlanReport.Row, accepted: Bool)? {
        func better(_ a: PlanReport.Row, _ b: PlanReport.Row) -> Bool {
            (a.shares.refused, a.shares.stale, a.movieTTL) < (b.shares.refused, b.shares.stale, b.movieTTL)
        }
        let accepted = rows.filter { $0.shares.percent($0.shares.refused) < acceptedRefusedPercent }
        if let plan = accepted.map(\.plan).min() {
            return (accepted.filter { $0.plan == plan }.min(by: better)!, true)
        }
        return rows.min { a, b in
            a.shares.percent(a.shares.refused) < b.shares.percent(b.shares.refused)
                || (a.shares.percent(a.shares.refused) == b.shares.percent(b.shares.refused) && a.plan < b.plan)
        }.map { ($0, false) }
    }

    /// The recommendation, in one sentence.
    static func sentence(_ rows: [PlanReport.Row]) -> String {
        guard let (row, accepted) = recommended(rows) else {
            return "There is nothing to recommend: no row was replayed."
        }
        let tenths = PlanReport.percentTenths([
            row.shares.fresh, row.shares.stale, row.shares.filled, row.shares.refused,
        ])
        let refused = "\(tenths[3] / 10).\(tenths[3] % 10)%"
        let stale = "\(tenths[1] / 10).\(tenths[1] % 10)%"
        if accepted {
            return "Take the \(row.plan)-calls-a-minute plan with a movie TTL of \(PlanReport.duration(row.movieTTL)): "
                + "the cheapest that refuses under \(Int(acceptedRefusedPercent))% of requests on this log "
                + "(\(refused) refused, \(stale) stale)."
        }
        return "No plan compared refuses under \(Int(acceptedRefusedPercent))% of requests on this log: the "
            + "\(row.plan)-calls-a-minute plan with a movie TTL of \(PlanReport.duration(row.movieTTL)) refuses least "
            + "(\(refused)); compare larger plans or longer TTLs."
    }

    /// The page. `first` and `last`: the times of the log's first and last request.
    /// `caveats`: the text report's (`PlanReport.caveats`), listed above the recommendation,
    /// which they qualify.
    static func render(
        rows: [PlanReport.Row], requests: Int, first: Double, last: Double, caveats: [String], options: PlanOptions
    ) -> String {
        let minutes = max(1, Int((MinuteHistory.minuteStart(last) - MinuteHistory.minuteStart(first)) / 60) + 1)
        let stretch = (minutes + maxPoints - 1) / maxPoints
        let lines = rows.map { points($0.shares.refusedPerMinute, minutes: minutes, stretch: stretch) }
        let most = max(1, lines.flatMap { $0 }.max() ?? 0)
        var body = ""
        for (row, line) in zip(rows, lines) {
            let tenths = PlanReport.percentTenths([
                row.shares.fresh, row.shares.stale, row.shares.filled, row.shares.refused,
            ])
            let percents = tenths.map { "\($0 / 10).\($0 % 10)" }
            body += "<tr class=\"row\" data-plan=\"\(row.plan)\" data-movie-ttl=\"\(Int(row.movieTTL))\">"
            body += "<td>\(row.plan)/min</td><td>\(escaped(PlanReport.duration(row.movieTTL)))</td><td>"
            body += bar(tenths)
            body += "</td>"
            for (kind, percent) in zip(["fresh", "stale", "filled", "refused"], percents) {
                body += "<td class=\"n\" data-share=\"\(kind)\">\(percent)</td>"
            }
            body += "<td>" + sparkline(line, most: most) + "</td>"
            body +=
                "<td class=\"n\" data-refused-total=\"\(row.shares.refused)\">\(PlanReport.grouped(row.shares.refused))</td></tr>\n"
        }
        let span = PlanReport.span(last - first)
        let caveatList =
            caveats.isEmpty
            ? ""
            : "<ul id=\"caveats\">" + caveats.map { "<li class=\"caveat\">\(escaped($0))</li>" }.joined() + "</ul>\n"
        let per = stretch == 1 ? "a minute" : "the busiest minute of each \(stretch)"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <title>amodb-proxy plan</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 1040px; padding: 16px; color: #1b1f24; background: #fff; }
            h1 { font-size: 20px; margin: 0 0 4px; }
            .muted { color: #57606a; }
            #recommendation { font-size: 16px; font-weight: 600; border-left: 4px solid #0969da; padding: 6px 10px; margin: 12px 0; background: #f6f8fa; }
            table { border-collapse: collapse; width: 100%; }
            td, th { padding: 4px 6px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: middle; }
            td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
            .key { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; border-radius: 2px; }
            .fresh { background: #2da44e; } .stale { background: #d4a72c; } .filled { background: #0969da; } .refused { background: #cf222e; }
            svg { display: block; }
            #caveats { margin: 12px 0; padding: 6px 10px 6px 28px; border-left: 4px solid #d4a72c; background: #fff8c5; }
            </style>
            </head>
            <body>
            <h1>amodb-proxy plan</h1>
            <div class="muted">Replayed \(PlanReport.grouped(requests)) requests over \(escaped(span)), from \(PlanReport.minute(first)) to \(PlanReport.minute(last)) UTC; trending lists fresh for \(escaped(PlanReport.duration(options.trendingTTL))), a miss waits up to \(escaped(PlanReport.duration(options.missWait))) for a call.</div>
            \(caveatList)<p id="recommendation">\(escaped(sentence(rows)))</p>
            <div class="muted"><span class="key fresh"></span>fresh<span class="key stale"></span>stale<span class="key filled"></span>filled (one call)<span class="key refused"></span>refused (503); the line: refused requests \(per), over the log (one scale for every row, at most \(most)).</div>
            <table>
            <thead><tr><th>plan</th><th>movie TTL</th><th>answers</th><th class="n">fresh %</th><th class="n">stale %</th><th class="n">filled %</th><th class="n">refused %</th><th>refused a minute</th><th class="n">refused</th></tr></thead>
            <tbody>
            \(body)</tbody>
            </table>
            <p class="muted">Fresh and stale answers cost no call, filled ones one; refused ones got 503. Pick the cheapest plan, and TTL, whose refused and stale shares you accept.</p>
            </body>
            </html>

            """
    }

    /// The stacked bar of a row's shares (in tenths of a percent, adding up to 1000).
    private static func bar(_ tenths: [Int]) -> String {
        var svg =
            "<svg class=\"shares\" width=\"240\" height=\"16\" viewBox=\"0 0 1000 16\" preserveAspectRatio=\"none\">"
        var x = 0
        for (kind, share) in zip(["fresh", "stale", "filled", "refused"], tenths) where share > 0 {
            svg +=
                "<rect class=\"bar \(kind)\" x=\"\(x)\" y=\"0\" width=\"\(share)\" height=\"16\" fill=\"\(colour(kind))\"><title>\(kind) \(share / 10).\(share % 10)%</title></rect>"
            x += share
        }
        return svg + "</svg>"
    }

    /// A row's refused requests per minute as a line over the log's span, on the scale `most`.
    private static func sparkline(_ values: [Int], most: Int) -> String {
        let width = 220.0
        let height = 32.0
        let step = values.count > 1 ? width / Double(values.count - 1) : width
        let points = values.enumerated().map { index, value in
            let x = Double(index) * step
            let y = height - 1 - Double(value) / Double(most) * (height - 2)
            return "\(rounded(x)),\(rounded(y))"
        }
        let drawn = points.count == 1 ? points + ["\(rounded(width)),\(points[0].split(separator: ",")[1])"] : points
        return "<svg class=\"refusals\" width=\"220\" height=\"32\" viewBox=\"0 0 220 32\">"
            + "<line x1=\"0\" y1=\"31\" x2=\"220\" y2=\"31\" stroke=\"#d0d7de\"/>"
            + "<polyline fill=\"none\" stroke=\"#cf222e\" stroke-width=\"1.5\" points=\"\(drawn.joined(separator: " "))\"/></svg>"
    }

    /// `perMinute` over `minutes` minutes, by the busiest minute of each `stretch` of them.
    static func points(_ perMinute: [Int], minutes: Int, stretch: Int) -> [Int] {
        let padded = perMinute.prefix(minutes) + Array(repeating: 0, count: max(0, minutes - perMinute.count))
        return stride(from: 0, to: minutes, by: stretch).map { start in
            padded[start..<min(minutes, start + stretch)].max() ?? 0
        }
    }

    private static func colour(_ kind: String) -> String {
        switch kind {
        case "fresh": "#2da44e"
        case "stale": "#d4a72c"
        case "filled": "#0969da"
        default: "#cf222e"
        }
    }

    private static func rounded(_ value: Double) -> String {
        String((value * 10).rounded() / 10)
    }

    /// `text` safe in HTML text and attribute values.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
