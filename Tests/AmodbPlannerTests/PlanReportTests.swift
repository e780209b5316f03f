import AmodbModels
import Testing

@testable import AmodbPlanner

/// The planner's table: every row a whole (its shares add up to exactly 100.0), every
/// line within 80 columns, skipped lines said.
struct PlanReportTests {
    @Test(arguments: [
        [1, 1, 1, 0], [2, 1, 0, 0], [1, 0, 0, 0], [999_999, 1, 0, 0], [333, 333, 333, 1], [7, 11, 13, 17],
        [0, 0, 0, 5], [1, 1, 1, 1],
        [123_457, 2, 98_765, 4_321],
    ])
    func sharesInTenthsAddUpToAThousand(counts: [Int]) {
        let tenths = PlanReport.percentTenths(counts)
        #expect(tenths.reduce(0, +) == 1000)
        let total = Double(counts.reduce(0, +))
        for (count, tenth) in zip(counts, tenths) {
            #expect(abs(Double(tenth) - Double(count) * 1000 / total) < 1, "each share is its count's, rounded")
        }
    }

    @Test func noRequestsIsNoShares() {
        #expect(PlanReport.percentTenths([0, 0, 0, 0]) == [0, 0, 0, 0])
    }

    @Test(arguments: [
        (1800.0, "30 min"), (21_600, "6 h"), (86_400, "24 h"), (2, "2 s"), (0.5, "0.5 s"), (90, "90 s"),
        (5400, "90 min"),
    ])
    func durationsAreWrittenAsPeopleSayThem(seconds: Double, text: String) {
        #expect(PlanReport.duration(seconds) == text)
    }

    @Test(arguments: [(0, "0"), (999, "999"), (1000, "1,000"), (1_000_000, "1,000,000"), (12_345_678, "12,345,678")])
    func countsAreGroupedByThousands(value: Int, text: String) {
        #expect(PlanReport.grouped(value) == text)
    }

    @Test func aLogShorterThanTheTTLsItComparesIsSaidToBe() throws {
        var options = PlanOptions(accessLog: "x")
        options.movieTTLs = [1800, 21_600, 86_400]
        let request = try AmodbRequest(route: .movie(id: 550))
        let contents = AccessLogReader.Contents(
            requests: [
                ReplayRequest(time: 1_795_984_745, request: request),
                ReplayRequest(time: 1_795_984_745 + 7_200, request: request),
            ],
            linesBeforeKeys: 0, linesNotForwarded: 0, linesUnreadable: 0, linesOutOfOrder: 0)
        let text = PlanReport.render(contents, rows: [], options: options)
        #expect(text.contains("The log covers less than the movie TTLs 6 h, 24 h"), "\(text)")
        #expect(text.contains("Replay at least 24 h of log"))
        for line in text.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        options.movieTTLs = [1800]
        #expect(!PlanReport.render(contents, rows: [], options: options).contains("The log covers less"))
    }

    @Test func theReportHasARowPerPlanAndTTLWithinEightyColumnsAndSaysWhatWasSkipped() throws {
        var options = PlanOptions(accessLog: "x")
        options.plans = [20, 120, 100_000]
        options.movieTTLs = [1800, 31_535_999]
        let request = try AmodbRequest(route: .movie(id: 550))
        let contents = AccessLogReader.Contents(
            requests: [
                ReplayRequest(time: 1_795_984_745, request: request),
                ReplayRequest(time: 1_796_084_745, request: request),
            ],
            linesBeforeKeys: 1_234_567, linesNotForwarded: 1, linesUnreadable: 2, linesOutOfOrder: 0)
        var rows: [PlanReport.Row] = []
        for plan in options.plans {
            for ttl in options.movieTTLs {
                rows.append(
                    PlanReport.Row(
                        plan: plan, movieTTL: ttl,
                        shares: ReplayShares(fresh: 3, stale: plan, filled: 5, refused: 7, staleAgesP95: 86_400 * 400)))
            }
        }
        let text = PlanReport.render(contents, rows: rows, options: options)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines { #expect(line.count <= 80, "\(line)") }
        #expect(
            text.hasPrefix("Replayed 2 requests over 27 h 46 min,\nfrom 2026-11-29 20:39 to 2026-12-01 00:25 UTC.\n"))
        #expect(text.contains("1,234,567 lines written before keys were logged were skipped."))
        #expect(text.contains("1 line that asked amodb nothing"))
        #expect(text.contains("2 lines that are no access-log lines were skipped."))
        let header = try #require(lines.firstIndex { $0.hasPrefix("plan/min") })
        let table = lines[(header + 1)...].prefix { !$0.isEmpty }
        #expect(table.count == 6)
        for (row, line) in zip(rows, table) {
            // plan, TTL and its unit, four shares, the age and its unit.
            let cells = line.split(separator: " ")
            try #require(cells.count == 9, "\(line)")
            #expect(cells[0] == String(row.plan)[...])
            #expect(cells[1...2].joined(separator: " ") == PlanReport.duration(row.movieTTL))
            let shares = cells[3...6].compactMap { Double($0) }
            #expect(shares.count == 4 && abs(shares.reduce(0, +) - 100) < 0.001, "\(line)")
            #expect(cells[7...8].joined(separator: " ") == "9600 h")
        }
    }

    /// The page lists the text report's caveats, word for word: without them its rows for
    /// TTLs longer than the log read alike and look like a bug.
    @Test func thePageShowsTheTextReportsCaveats() throws {
        var options = PlanOptions(accessLog: "x")
        options.movieTTLs = [1800, 86_400]
        let request = try AmodbRequest(route: .movie(id: 550))
        let contents = AccessLogReader.Contents(
            requests: [
                ReplayRequest(time: 1_795_984_745, request: request),
                ReplayRequest(time: 1_795_984_745 + 7_200, request: request),
            ],
            linesBeforeKeys: 3, linesNotForwarded: 1, linesUnreadable: 2, linesOutOfOrder: 0)
        let caveats = PlanReport.caveats(contents, options: options)
        #expect(caveats.count == 4, "\(caveats)")
        let text = PlanReport.render(contents, rows: [], options: options)
        let page = PlanHTMLReport.render(
            rows: [], requests: 2, first: 1_795_984_745, last: 1_795_984_745 + 7_200, caveats: caveats,
            options: options)
        for caveat in caveats {
            #expect(text.replacingOccurrences(of: "\n", with: " ").contains(caveat), "the text says \(caveat)")
            #expect(
                page.contains("<li class=\"caveat\">\(PlanHTMLReport.escaped(caveat))</li>"), "the page says \(caveat)")
        }
        #expect(page.contains("The log covers less than the movie TTL 24 h"))
        #expect(page.contains("3 lines written before keys were logged were skipped."))
        #expect(
            page.range(of: "id=\"caveats\"")!.lowerBound < page.range(of: "id=\"recommendation\"")!.lowerBound,
            "read before the recommendation they qualify")

        let clean = AccessLogReader.Contents(
            requests: contents.requests, linesBeforeKeys: 0, linesNotForwarded: 0, linesUnreadable: 0,
            linesOutOfOrder: 0)
        options.movieTTLs = [1800]
        #expect(PlanReport.caveats(clean, options: options).isEmpty)
        let quiet = PlanHTMLReport.render(
            rows: [], requests: 2, first: 1_795_984_745, last: 1_795_984_745 + 7_200, caveats: [], options: options)
        #expect(!quiet.contains("id=\"caveats\""), "no empty list")
    }
}
