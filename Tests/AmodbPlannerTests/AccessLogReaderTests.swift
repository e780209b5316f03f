import AmodbHTTP
import AmodbModels
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbPlanner

/// The planner's reader: the lines this version writes are read back into the requests
/// they were, in either format; the previous version's lines, other logs' lines and
/// garbage are counted, not replayed; the result is in time order.
struct AccessLogReaderTests {
    /// docs/operations.md's access-log example before keys were logged: a line of the previous version.
    static let previousVersionLine =
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","status":200,"cache":"hit","duration_ms":0.084,"bytes":1937,"encoding":"identity","client":"203.0.113.7"}"#

    /// 2026-11-29T20:39:05Z.
    static let base = 1_795_984_745.0

    private func read(_ text: String) -> AccessLogReader.Contents {
        var reader = AccessLogReader()
        reader.feed(Array(text.utf8))
        return reader.finish()
    }

    /// The same text fed one byte at a time.
    private func readByteByByte(_ text: String) -> AccessLogReader.Contents {
        var reader = AccessLogReader()
        for byte in text.utf8 {
            reader.feed([byte])
        }
        return reader.finish()
    }

    private func keys(_ contents: AccessLogReader.Contents) -> [String] {
        contents.requests.map(\.request.pathAndQuery)
    }

    static let requests: [AmodbRequest] = [
        try! AmodbRequest(route: .movie(id: 550), language: "de-DE", appendToResponse: ["credits", "ratings"]),
        try! AmodbRequest(route: .trending(.movie, .week)),
        try! AmodbRequest(route: .trending(.tv, .day), language: "ja-JP", page: 3),
        try! AmodbRequest(route: .movie(id: 2_147_483_647)),
    ]

    @Test(arguments: LogFormat.allCases)
    func linesThisVersionWritesAreReadBackIntoTheirRequests(format: LogFormat) {
        var text = ""
        for (index, request) in Self.requests.enumerated() {
            text +=
                AccessLogLine.forwarded(
                    request, at: Self.base + Double(index) * 1.5, cache: [.hit, .miss, .stale][index % 3],
                    format: format) + "\n"
        }
        for contents in [read(text), readByteByByte(text)] {
            #expect(contents.requests.map(\.request) == Self.requests)
            #expect(contents.requests.map(\.time) == [Self.base, Self.base + 1.5, Self.base + 3, Self.base + 4.5])
            #expect(contents.linesBeforeKeys == 0 && contents.linesNotForwarded == 0 && contents.linesUnreadable == 0)
        }
    }

    @Test func theREADMEsExampleOfThePreviousVersionIsCountedNotReplayed() {
        let contents = read(Self.previousVersionLine + "\n" + Self.previousVersionLine)
        #expect(contents.requests.isEmpty)
        #expect(contents.linesBeforeKeys == 2)
        #expect(contents.linesUnreadable == 0)
    }

    @Test func theREADMEsExampleOfThisVersionIsReplayed() throws {
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../docs/operations.md"), encoding: .utf8)
        let example = try #require(
            readme.split(separator: "\n").first {
                $0.contains(#"{"time":"#) && $0.contains(#""route":"/3/movie/{movie_id}""#)
            })
        let contents = read(String(example))
        #expect(keys(contents) == ["/movie/550?language=de-DE"])
        #expect(contents.linesBeforeKeys == 0)
    }

    @Test func aLogOfBothVersionsReplaysTheNewLinesAndCountsTheOld() {
        let new = AccessLogLine.forwarded(Self.requests[0], at: Self.base + 60)
        let contents = read([Self.previousVersionLine, new, Self.previousVersionLine].joined(separator: "\n") + "\n")
        #expect(keys(contents) == [Self.requests[0].pathAndQuery])
        #expect(contents.linesBeforeKeys == 2)
    }

    @Test func linesThatAskedAmodbNothingAreCountedApart() {
        let lines = [
            #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/healthz","status":200,"cache":"none","duration_ms":0.01,"bytes":15,"encoding":"identity","client":"127.0.0.1"}"#,
            #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/metrics","status":200,"cache":"none","duration_ms":0.01,"bytes":15,"encoding":"identity","client":"127.0.0.1"}"#,
            #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"unmatched","path":"/3/movie/popular","status":404,"cache":"none","duration_ms":0.01,"bytes":15,"encoding":"identity","client":"127.0.0.1"}"#,
            #"{"time":"2026-11-29T20:39:05.123Z","method":"-","route":"invalid","status":400,"cache":"none","duration_ms":0,"bytes":0,"encoding":"identity","client":"127.0.0.1"}"#,
            // Refused before the cache (a missing client token): no call, with or without a key.
            #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":401,"cache":"none","duration_ms":0,"bytes":0,"encoding":"identity","client":"127.0.0.1"}"#,
            #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","status":400,"cache":"none","duration_ms":0,"bytes":0,"encoding":"identity","client":"127.0.0.1"}"#,
            "2026-11-29T20:39:05.123Z method=GET route=/readyz status=200 cache=none duration_ms=0.01 bytes=15 encoding=identity client=127.0.0.1",
        ]
        let contents = read(lines.joined(separator: "\n"))
        #expect(contents.requests.isEmpty)
        #expect(contents.linesNotForwarded == lines.count)
        #expect(contents.linesBeforeKeys == 0 && contents.linesUnreadable == 0)
    }

    @Test(arguments: [
        "not a log line at all",
        #"{"time":"2026-11-29T20:39:05.123Z","level":"info","message":"amodb-proxy listening","address":"http://0.0.0.0:8080"}"#,
        "2026-11-29T20:39:05.123Z warning amodb answered 429 retry_after=30",
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit""#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit"} trailing"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","cache":"hit","nested":{"a":1}}"#,
        #"{"time":"yesterday","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit"}"#,
        #"{"time":"2026-13-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit"}"#,
        #"{"time":"2026-11-29T20:39:05.123","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit"}"#,
        #"{"method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit"}"#,
        // Keys the proxy never writes: redacted, not canonical, not a route, escaped.
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/<redacted>","status":200,"cache":"hit"}"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550?language=de-DE&append_to_response=credits","status":200,"cache":"hit"}"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550?api_key=x","status":200,"cache":"hit"}"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/latest","status":200,"cache":"hit"}"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"\/movie\/550","status":200,"cache":"hit"}"#,
        #"2026-11-29T20:39:05.123Z method=GET route=/3/movie/{movie_id} key="/movie/550 status=200 cache=hit"#,
        // Durations no request took, or no number at all: the time they would move is no time.
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit","duration_ms":1234567890123456789012345}"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit","duration_ms":86400001}"#,
        #"{"time":"2026-11-29T20:39:05.123Z","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550","status":200,"cache":"hit","duration_ms":"soon"}"#,
    ])
    func aLineThatIsNoAccessLogLineIsCountedAsUnreadable(line: String) {
        let good = AccessLogLine.forwarded(Self.requests[1], at: Self.base)
        for contents in [read(good + "\n" + line + "\n" + good), readByteByByte(line + "\n" + good + "\n")] {
            #expect(keys(contents).allSatisfy { $0 == "/trending/movie/week" } && !contents.requests.isEmpty)
            #expect(contents.linesUnreadable == 1)
            #expect(contents.linesBeforeKeys == 0 && contents.linesNotForwarded == 0)
        }
    }

    @Test func blankLinesCRLFAndAMissingLastNewlineAreFine() {
        let line = AccessLogLine.forwarded(Self.requests[0], at: Self.base)
        let contents = read("\n\r\n  " + line + "  \r\n\n" + line)
        #expect(contents.requests.count == 2)
        #expect(contents.linesUnreadable == 0)
    }

    @Test func aLineLongerThanTheLimitIsUnreadableAndTheNextIsRead() {
        let long = String(repeating: "x", count: AccessLogReader.maxLineBytes + 10)
        let line = AccessLogLine.forwarded(Self.requests[0], at: Self.base)
        for contents in [read(long + "\n" + line + "\n" + long), readByteByByte(line + "\n" + long + "\n" + line)] {
            #expect(contents.linesUnreadable >= 1)
            #expect(!contents.requests.isEmpty && keys(contents).allSatisfy { $0 == Self.requests[0].pathAndQuery })
        }
        #expect(read(long + "\n" + line + "\n" + long).linesUnreadable == 2)
    }

    @Test func unsortedLinesAreSortedByTimeKeepingTheOrderOfEqualTimes() {
        let times = [10.0, 5, 5, 12, 7, 5, 12]
        var text = ""
        for (index, time) in times.enumerated() {
            text +=
                AccessLogLine.forwarded(try! AmodbRequest(route: .movie(id: index + 1)), at: Self.base + time) + "\n"
        }
        for contents in [read(text), readByteByByte(text)] {
            #expect(contents.requests.map { $0.time - Self.base } == [5, 5, 5, 7, 10, 12, 12])
            #expect(contents.requests.map(\.request.route) == [2, 3, 6, 5, 1, 4, 7].map { Route.movie(id: $0) })
            #expect(contents.linesOutOfOrder == 4)
        }
    }

    @Test func aRequestArrivedItsDurationBeforeItsLine() {
        let line = AccessLogLine.forwarded(Self.requests[0], at: Self.base + 10, cache: .miss, milliseconds: 1500)
        let contents = read(line)
        #expect(contents.requests.map(\.time) == [Self.base + 8.5])
        #expect(contents.linesOutOfOrder == 0)
    }

    @Test(arguments: [
        ("2026-11-29T20:39:05.123Z", base + 0.123),
        ("2026-11-29T20:39:05Z", base),
        ("2026-11-29t20:39:05.5z", base + 0.5),
        ("2026-11-29T21:39:05.25+01:00", base + 0.25),
        ("2026-11-29T19:09:05-01:30", base),
        ("1970-01-01T00:00:00.000Z", 0),
        ("2000-02-29T23:59:59.999Z", 951_868_799.999),
        ("2100-03-01T00:00:00.000Z", 4_107_542_400),
    ])
    func timesAreReadAsRFC3339(text: String, seconds: Double) {
        let line = #"{"time":""# + text + #"","route":"/3/movie/{movie_id}","key":"/movie/1","cache":"hit"}"#
        let contents = read(line)
        #expect(contents.linesUnreadable == 0)
        #expect(abs((contents.requests.first?.time ?? -1) - seconds) < 1e-6)
    }

    @Test func theCalendarIsReadBackAsItIsWritten() {
        var second = -86_400 * 365
        while second < 4_200_000_000 {
            let time = CivilTime(epochSeconds: second)
            let back = CivilTime.epochSeconds(
                year: time.year, month: time.month, day: time.day, hour: time.hour, minute: time.minute,
                second: time.second)
            #expect(back == second)
            if back != second { break }
            second += 86_400 * 13 + 3_607
        }
    }

    @Test(arguments: LogFormat.allCases)
    func aFileTheSyntheticTraceWritesIsReadBackIntoTheTrace(format: LogFormat) throws {
        let trace = SyntheticTrace(rate: 5, duration: 600, seed: 42)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try trace.writeAccessLog(to: path, format: format)
        let contents = try AccessLogReader.read(path: path)
        let expected = trace.requests()
        #expect(contents.requests.count == expected.count)
        #expect(contents.requests.map(\.request) == expected.map(\.request))
        // Logged to the millisecond.
        #expect(zip(contents.requests, expected).allSatisfy { abs($0.time - $1.time) <= 0.0005 + 1e-6 })
        #expect(contents.linesUnreadable == 0 && contents.linesBeforeKeys == 0)
    }

    @Test func aFileThatCannotBeOpenedIsAFailureNamingIt() {
        #expect(throws: AccessLogReader.Failure.self) { try AccessLogReader.read(path: "/nonexistent/access.log") }
        do {
            _ = try AccessLogReader.read(path: "/nonexistent/access.log")
        } catch {
            #expect(error.description.contains("/nonexistent/access.log"))
        }
    }
}
