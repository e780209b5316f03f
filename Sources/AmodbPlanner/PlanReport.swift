import AmodbHTTP
import AmodbProxy
import Foundation

/// `amodb-proxy plan`: reads an access log, replays it through the cache and budget policy
/// (`PolicyReplay`) for every plan and movie TTL asked for, and words what it counted as a
/// table an operator picks a plan and a TTL from. A simulation: no network, no cache.
package enum PlanReport {
    /// Why there is no report.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, on one line.
        package let description: String
    }

    /// One row of the table: a plan, a movie TTL, and what the replay counted.
    struct Row: Sendable {
        var plan: Int
        var movieTTL: Double
        var shares: ReplayShares
    }

    /// Reads `options.accessLog`, replays it for each plan and movie TTL, and returns the report.
    package static func run(_ options: PlanOptions) async throws(Failure) -> String {
        let contents: AccessLogReader.Contents
        do {
            contents = try AccessLogReader.read(path: options.accessLog)
        } catch {
            throw Failure(description: error.description)
        }
        guard !contents.requests.isEmpty else {
            var reason = "no request in \(ConfigurationLoader.shown(options.accessLog)) can be replayed"
            if contents.linesBeforeKeys > 0 {
                reason +=
                    ": \(lines(contents.linesBeforeKeys)) \(were(contents.linesBeforeKeys)) written before keys were logged"
                    + " (collect a log written by this version)"
            }
            throw Failure(description: reason)
        }
        let runs = options.plans.flatMap { plan in options.movieTTLs.map { (plan, $0) } }
        let requests = contents.requests
        // Runs are independent: they share the requests (read only) and run side by side.
        let shares = await withTaskGroup(of: (Int, ReplayShares).self) { group in
            for (index, (plan, ttl)) in runs.enumerated() {
                group.addTask {
                    let shares = await PolicyReplay.run(
                        requests, plan: plan, movieTTL: ttl, trendingTTL: options.trendingTTL,
                        configurationTTL: options.configurationTTL,
                        missWait: options.missWait)
                    return (index, shares)
                }
            }
            var shares = [ReplayShares?](repeating: nil, count: runs.count)
            for await (index, counted) in group { shares[index] = counted }
            return shares.map { $0! }  // every task returned its index
        }
        let rows = zip(runs, shares).map { Row(plan: $0.0.0, movieTTL: $0.0.1, shares: $0.1) }
        if let htmlPath = options.htmlPath {
            let page = PlanHTMLReport.render(
                rows: rows, requests: contents.requests.count, first: contents.requests.first?.time ?? 0,
                last: contents.requests.last?.time ?? 0, caveats: caveats(contents, options: options),
                options: options)
            do {
                try Data(page.utf8).write(to: URL(fileURLWithPath: htmlPath), options: .atomic)
            } catch {
                throw Failure(
                    description:
                        "cannot write the page to \(ConfigurationLoader.shown(htmlPath)): \(error.localizedDescription)"
                )
            }
        }
        return render(contents, rows: rows, options: options)
    }

    /// The report: what was replayed and skipped, the table, and how to read it; no line
    /// wider than 80 columns.
    static func render(_ contents: AccessLogReader.Contents, rows: [Row], options: PlanOptions) -> String {
        let first = contents.requests.first?.time ?? 0
        let last = contents.requests.last?.time ?? 0
        var text = "Replayed \(grouped(contents.requests.count)) requests over \(span(last - first)),\n"
        text += "from \(minute(first)) to \(minute(last)) UTC.\n"
        text +=
            "Trending lists are fresh for \(duration(options.trendingTTL)); "
            + "a miss waits up to \(duration(options.missWait)) for a call.\n"
        for caveat in caveats(contents, options: options) { text += wrapped(caveat) }
        text += "\n"
        let columns = [
            ("plan/min", 8), ("movie TTL", 9), ("fresh %", 7), ("stale %", 7), ("filled %", 8), ("refused %", 9),
            ("p95 stale age", 13),
        ]
        text += columns.map { right($0.0, $0.1) }.joined(separator: "  ") + "\n"
        for row in rows {
            let tenths = percentTenths([row.shares.fresh, row.shares.stale, row.shares.filled, row.shares.refused])
            var cells = [String(row.plan), duration(row.movieTTL)]
            cells += tenths.map { "\($0 / 10).\($0 % 10)" }
            cells.append(row.shares.stale > 0 ? age(row.shares.staleAgesP95) : "-")
            text += zip(cells, columns).map { right($0.0, $0.1.1) }.joined(separator: "  ") + "\n"
        }
        text += "\n"
        text += "Fresh and stale answers cost no call, filled ones one; refused ones got 503.\n"
        text += "Pick the cheapest plan, and TTL, whose refused and stale shares you accept.\n"
        return text
    }

    /// Shares of `counts` in tenths of a percent that add up to exactly 1000 (the largest
    /// remainders get the tenths rounding left over), so a row reads as a whole.
    static func percentTenths(_ counts: [Int]) -> [Int] {
        let total = counts.reduce(0, +)
        guard total > 0 else { return counts.map { _ in 0 } }
        var tenths = counts.map { $0 * 1000 / total }
        let remainders = counts.map { $0 * 1000 % total }
        let order = remainders.indices.sorted {
            remainders[$0] > remainders[$1] || (remainders[$0] == remainders[$1] && $0 < $1)
        }
        for index in order.prefix(1000 - tenths.reduce(0, +)) { tenths[index] += 1 }
        return tenths
    }

    /// `text` in lines of at most 80 columns, broken between words, each ending in a newline.
    static func wrapped(_ text: String) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > 80 {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { $0 + "\n" }.joined()
    }

    /// `1 line`, `1,000 lines`.
    static func lines(_ count: Int) -> String {
        count == 1 ? "1 line" : "\(grouped(count)) lines"
    }

    /// The verb after `lines(count)`.
    static func were(_ count: Int) -> String {
        count == 1 ? "was" : "were"
    }

    /// `1,000,000`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }

    /// A setting's seconds as people say them: `30 min`, `6 h`, `2 s`, `1.5 s`, `90 s`.
    static func duration(_ seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// An age, to two figures or so: `45 s`, `12 min`, `3.4 h`, `26 h`.
    static func age(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 90 { return "\(Int(seconds.rounded())) s" }
        if seconds < 90 * 60 { return "\(Int((seconds / 60).rounded())) min" }
        let hours = seconds / 3600
        if hours < 10 { return "\((hours * 10).rounded() / 10) h" }
        return "\(Int(hours.rounded())) h"
    }

    /// A span: `3 h 46 min`, `12 min 5 s`, `40 s`.
    static func span(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3600 { return "\(whole / 3600) h \(whole / 60 % 60) min" }
        if whole >= 60 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole) s"
    }

    /// `2025-11-29 20:39`.
    static func minute(_ seconds: Double) -> String {
        let time = CivilTime(epochSeconds: Int(seconds.rounded(.down)))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(time.year)-\(two(time.month))-\(two(time.day)) \(two(time.hour)):\(two(time.minute))"
    }

    /// `text` right-aligned in `width` columns.
    private static func right(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
