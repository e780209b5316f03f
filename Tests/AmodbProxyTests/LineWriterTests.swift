import AmodbTestSupport
import Foundation
import Glibc
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct LineWriterTests {
    /// A pipe whose read end nobody reads until the test says so.
    private struct StalledPipe {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
            readEnd = fds[0]
            writeEnd = fds[1]
            _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        }

        /// Reads what is there now; the byte count.
        func drain() -> Int {
            var buffer = [UInt8](repeating: 0, count: 65536)
            var total = 0
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if count <= 0 { return total }
                total += count
            }
        }

        /// What is there now.
        func read() -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if count <= 0 { return bytes }
                bytes += buffer[..<count]
            }
        }

        func close() {
            _ = Glibc.close(readEnd)
            _ = Glibc.close(writeEnd)
        }
    }

    @Test func aStalledReaderCostsABoundedBufferDroppedLinesAndOneNote() async throws {
        let pipe = try StalledPipe()
        let notes = LogCapture()
        let writer = LineWriter(fd: pipe.writeEnd, name: "the test pipe", maxBytes: 256 * 1024, noteSink: notes.sink)
        let line = String(repeating: "x", count: 199)

        // 20 MB of lines against a 64 KiB pipe nobody reads and a 256 KiB bound: a write that
        // waited for the reader would wait for ever (the suite's time limit); none does.
        for _ in 0..<100_000 { writer.write(line) }

        #expect(writer.waitingBytes <= 256 * 1024)
        #expect(writer.droppedLines > 90_000)
        #expect(notes.all.count == 1, "a note at most once a minute, however many lines are dropped")
        let note = try #require(notes.all.first)
        #expect(
            note.contains("log lines dropped") && note.contains("the test pipe") && note.contains(#""level":"warning""#)
        )

        // Once the reader drains, lines flow again.
        let dropped = writer.droppedLines
        // The writing thread runs at a low priority: beside a busy machine's work it may
        // take a while to write out what waits.
        #expect(
            await eventually(within: 60) {
                _ = pipe.drain()
                return writer.waitingBytes == 0
            })
        writer.write("after the stall")
        writer.flush()
        #expect(pipe.drain() == "after the stall\n".utf8.count)
        #expect(writer.droppedLines == dropped)
        pipe.close()
    }

    /// The writing thread runs below the event loops' priority, so that a long `write(2)`
    /// on a slow disk cannot hold an event loop's core.
    @Test func theWritingThreadRunsAtALowerPriority() async throws {
        let pipe = try StalledPipe()
        defer { pipe.close() }
        let writer = LineWriter(fd: pipe.writeEnd, name: "the test pipe")
        #expect(await eventually { writer.threadID != nil })
        let threadID = try #require(writer.threadID)
        // /proc/self/task/<tid>/stat: "tid (comm) state …", the nice value the 17th field after the comm.
        let stat = try String(contentsOfFile: "/proc/self/task/\(threadID)/stat", encoding: .utf8)
        let afterCommand = try #require(stat.range(of: ") ", options: .backwards)).upperBound
        let fields = stat[afterCommand...].split(separator: " ")
        #expect(Int32(fields[16]) == LineWriter.writerNice)
        #expect(LineWriter.writerNice > 0)

        writer.write("still written")
        writer.flush()
        #expect(pipe.drain() == "still written\n".utf8.count)
    }

    @Test(arguments: LogFormat.allCases)
    func accessLogLinesAreWrittenInPlaceStampedAndScrubbed(format: LogFormat) throws {
        let pipe = try StalledPipe()
        defer { pipe.close() }
        let writer = LineWriter(fd: pipe.writeEnd, name: "the test pipe")
        let log = AccessLog(
            format: format, sink: nil, logger: ProxyLogger(secrets: [Secret("the-key")], sink: { _ in }), writer: writer
        )
        let before = Date()
        log.record(
            AccessLogEntry(
                method: "GET", route: .init(.movie), status: 200, cache: .hit, nanoseconds: 84_000, bytes: 1937,
                client: "203.0.113.7"))
        log.record(
            AccessLogEntry(
                method: "the-key", route: .unmatched, path: "/3/the-key/x", status: 404, cache: .none,
                nanoseconds: 1_000_000, bytes: 93,
                encoding: .identity, client: "::1"))
        writer.flush()
        let after = Date()

        let lines = String(decoding: pipe.read(), as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        try #require(lines.count == 3)
        #expect(lines[2].isEmpty, "every line ends in a newline")
        let timeStart = format == .json ? #"{"time":""#.count : 0
        let expected =
            format == .json
            ? [
                #"","method":"GET","route":"/3/movie/{movie_id}","status":200,"cache":"hit","duration_ms":0.084,"bytes":1937,"encoding":"identity","client":"203.0.113.7"}"#,
                #"","method":"<redacted>","route":"unmatched","path":"/3/<redacted>/x","status":404,"cache":"none","duration_ms":1,"bytes":93,"encoding":"identity","client":"::1"}"#,
            ]
            : [
                " method=GET route=/3/movie/{movie_id} status=200 cache=hit duration_ms=0.084 bytes=1937 encoding=identity client=203.0.113.7",
                " method=<redacted> route=unmatched path=/3/<redacted>/x status=404 cache=none duration_ms=1 bytes=93 encoding=identity client=::1",
            ]
        let stamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for (line, rest) in zip(lines, expected) {
            let time = line.dropFirst(timeStart).prefix(24)
            let parsed = try stamp.parse(String(time))
            #expect(
                parsed.timeIntervalSince(before) > -0.001 && after.timeIntervalSince(parsed) > -0.001,
                "\(time) is the time of writing")
            #expect(line.dropFirst(timeStart + 24) == rest)
        }
    }

    @Test func theMetricsCountDroppedLinesPerStream() throws {
        let samples = try PrometheusSamples(ProxyMetrics().render())
        #expect(samples.types["amodb_proxy_log_lines_dropped_total"] == "counter")
        #expect(
            try samples.value("amodb_proxy_log_lines_dropped_total", ["stream": "stdout"])
                == Double(LineWriter.standardOutput.droppedLines))
        #expect(
            try samples.value("amodb_proxy_log_lines_dropped_total", ["stream": "stderr"])
                == Double(LineWriter.standardError.droppedLines))
    }
}
