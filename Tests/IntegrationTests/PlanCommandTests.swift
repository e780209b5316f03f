import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// `amodb-proxy plan`, run as the built binary on a log the synthetic trace wrote: a row
/// for every plan and movie TTL, each row's shares adding up to 100, skipped lines said;
/// bad arguments exit 2 with one line. (The shares themselves are the engine's, and are
/// tested with it.)
@Suite(.timeLimit(.minutes(1)))
struct PlanCommandTests {
    /// A log of the trace, with a line of the previous version and an event line among its lines.
    private func writeLog(_ trace: SyntheticTrace) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString).log").path
        var bytes = trace.accessLog()
        bytes += Array((AccessLogReaderTestLines.previousVersion + "\n").utf8)
        bytes +=
            Array(#"{"time":"2025-11-29T20:39:06.000Z","level":"info","message":"amodb-proxy listening"}"#.utf8) + [10]
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The table's rows: plan, TTL, and the four shares.
    private func rows(_ output: String) throws -> [(plan: Int, ttl: String, shares: [Double])] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("plan/min") }, "\(output)")
        return try lines[(header + 1)...].prefix { !$0.isEmpty }.map { line in
            let cells = line.split(separator: " ")
            try #require(cells.count >= 7, "\(line)")
            return (
                try #require(Int(cells[0])), cells[1...2].joined(separator: " "), cells[3...6].compactMap { Double($0) }
            )
        }
    }

    @Test func theTableHasARowForEachPlanAndTTLAndEachRowIsAWhole() async throws {
        let trace = SyntheticTrace(rate: 2, duration: 1800, seed: 11)
        let path = try writeLog(trace)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try await ProxyBinary().run([
            "plan", "--access-log", path, "--plans", "20,40", "--movie-ttls", "600,3600,86400",
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let output = outcome.standardOutput
        let count = trace.requests().count
        try #require((1000..<1_000_000).contains(count))
        #expect(output.hasPrefix("Replayed \(count / 1000),\(String(format: "%03d", count % 1000)) requests over "))
        #expect(output.contains("1 line written before keys were logged was skipped."))
        #expect(output.contains("1 line that is no access-log line was skipped."))
        let table = try rows(output)
        #expect(table.map(\.plan) == [20, 20, 20, 40, 40, 40])
        #expect(table.map(\.ttl) == ["10 min", "1 h", "24 h", "10 min", "1 h", "24 h"])
        for row in table {
            #expect(row.shares.count == 4)
            #expect(abs(row.shares.reduce(0, +) - 100) <= 0.1, "\(row)")
        }
        for line in output.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }

    @Test func theDefaultsCompareThreePlansAndThreeTTLsAndStandardInputIsRead() async throws {
        let path = try writeLog(SyntheticTrace(rate: 1, duration: 600, seed: 12))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = try ProxyBinary().launch(
            ["plan", "--access-log", "-"], environment: [:], shellPrefix: "exec <'\(path)'", standardOutput: .pipe,
            standardError: .pipe)
        let (status, output) = try await offloaded {
            let output = child.standardOutput?.readToEnd() ?? []
            _ = child.standardError?.readToEnd()
            return (child.waitUntilExit().shellStatus, String(decoding: output, as: UTF8.self))
        }
        #expect(status == 0)
        let table = try rows(output)
        #expect(table.map(\.plan) == [20, 20, 20, 40, 40, 40, 120, 120, 120])
        #expect(table.map(\.ttl) == ["30 min", "6 h", "24 h", "30 min", "6 h", "24 h", "30 min", "6 h", "24 h"])
        for row in table { #expect(abs(row.shares.reduce(0, +) - 100) <= 0.1) }
    }

    @Test(arguments: [
        ["plan"], ["plan", "--access-log", "x", "--plans", "twenty"],
        ["plan", "--access-log", "x", "--movie-ttls", "-5"],
        ["plan", "--access-log", "x", "--miss-wait"], ["plan", "--access-log", "x", "--rate-limit", "40"],
    ])
    func badArgumentsExitTwoWithOneLine(arguments: [String]) async throws {
        let outcome = try await ProxyBinary().run(arguments)
        #expect(outcome.status == 2)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.hasPrefix("amodb-proxy: plan"))
        #expect(outcome.standardError.split(separator: "\n").count == 1)
    }

    @Test func aMissingLogOrOneWithNothingToReplayExitsOneSayingSo() async throws {
        let missing = try await ProxyBinary().run(["plan", "--access-log", "/nonexistent/proxy.log"])
        #expect(missing.status == 1)
        #expect(missing.standardError == "amodb-proxy: cannot open the access log /nonexistent/proxy.log\n")

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("plan-old-\(UUID().uuidString).log")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data((AccessLogReaderTestLines.previousVersion + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let old = try await ProxyBinary().run(["plan", "--access-log", path])
        #expect(old.status == 1)
        #expect(old.standardError.contains("1 line was written before keys were logged"))
    }

    @Test func htmlWritesTheSameRowsAsBarsWithRefusalsAMinuteAndOneRecommendation() async throws {
        let trace = SyntheticTrace(rate: 2, duration: 1800, seed: 13)
        let path = try writeLog(trace)
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString).html").path
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: page)
        }
        let outcome = try await ProxyBinary().run([
            "plan", "--access-log", path, "--plans", "2,40,1000", "--movie-ttls", "600,3600", "--html", page,
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let table = try rows(outcome.standardOutput)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Half an hour of log cannot tell a TTL of an hour from a longer one: both say so.
        #expect(outcome.standardOutput.contains("The log covers less than the movie TTL 1 h"))
        #expect(html.contains("<li class=\"caveat\">The log covers less than the movie TTL 1 h"), "\(html)")
        // One row per plan and TTL, in the table's order, with the table's shares.
        let pageRows = html.components(separatedBy: "<tr class=\"row\"").dropFirst()
        #expect(pageRows.count == table.count)
        for (row, pageRow) in zip(table, pageRows) {
            #expect(pageRow.hasPrefix(" data-plan=\"\(row.plan)\""), "\(pageRow.prefix(80))")
            let shares = ["fresh", "stale", "filled", "refused"].compactMap { kind -> Double? in
                let marker = "data-share=\"\(kind)\">"
                return pageRow.range(of: marker).flatMap { Double(pageRow[$0.upperBound...].prefix { $0 != "<" }) }
            }
            #expect(shares == row.shares, "\(row)")
            #expect(pageRow.contains("<svg class=\"shares\""))
            // The refusals' line leaves its baseline exactly when the row refused any.
            let line = try #require(
                pageRow.range(of: "points=\"").map { pageRow[$0.upperBound...].prefix { $0 != "\"" } })
            let heights = line.split(separator: " ").compactMap { $0.split(separator: ",").last.flatMap { Double($0) } }
            #expect(heights.contains { $0 < 31 } == (row.shares[3] > 0), "\(row)")
        }
        #expect(table.contains { $0.plan == 2 && $0.shares[3] > 1 }, "the small plan refuses: \(table)")
        // The recommendation: the smallest plan with a row refusing under 1%, its row refusing least.
        let accepted = table.filter { $0.shares[3] < 1 }
        let plan = try #require(accepted.map(\.plan).min())
        let best = try #require(
            accepted.filter { $0.plan == plan }.min { ($0.shares[3], $0.shares[1]) < ($1.shares[3], $1.shares[1]) })
        #expect(
            html.contains(
                "<p id=\"recommendation\">Take the \(plan)-calls-a-minute plan with a movie TTL of \(best.ttl): the cheapest"
            ), "\(html)")
        // Self-contained: nothing loaded from anywhere, no script.
        #expect(!html.contains("<script") && !html.contains(" src=") && !html.contains("<link"))

        let unwritable = try await ProxyBinary().run([
            "plan", "--access-log", path, "--html", "/nonexistent/report.html",
        ])
        #expect(unwritable.status == 1)
        #expect(unwritable.standardError.hasPrefix("amodb-proxy: cannot write the page to /nonexistent/report.html"))
    }

    @Test func helpMentionsPlan() async throws {
        let outcome = try await ProxyBinary().run(["--help"])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.contains("amodb-proxy plan --access-log FILE"))
    }
}

/// Lines the plan tests put among the trace's.
enum AccessLogReaderTestLines {
    /// docs/operations.md's access-log example before keys were logged.
    static let previousVersion =
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","status":200,"cache":"hit","duration_ms":0.084,"bytes":1937,"encoding":"identity","client":"203.0.113.7"}"#
}
