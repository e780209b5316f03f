@testable import AmodbProxy
import AmodbTestSupport
import Foundation
import Glibc
import Testing

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
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count <= 0 { return total }
                total += count
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

        // 20 MB of lines against a 64 KiB pipe and a 256 KiB bound: every write returns at once.
        let started = ContinuousClock.now
        for _ in 0..<100_000 { writer.write(line) }
        #expect(ContinuousClock.now - started < .seconds(10), "no write waited for the reader")

        #expect(writer.waitingBytes <= 256 * 1024)
        #expect(writer.droppedLines > 90_000)
        #expect(notes.all.count == 1, "a note at most once a minute, however many lines are dropped")
        let note = try #require(notes.all.first)
        #expect(note.contains("log lines dropped") && note.contains("the test pipe") && note.contains(#""level":"warning""#))

        // Once the reader drains, lines flow again.
        let dropped = writer.droppedLines
        #expect(await eventually { _ = pipe.drain(); return writer.waitingBytes == 0 })
        writer.write("after the stall")
        writer.flush()
        #expect(pipe.drain() == "after the stall\n".utf8.count)
        #expect(writer.droppedLines == dropped)
        pipe.close()
    }

    @Test func theMetricsCountDroppedLinesPerStream() throws {
        let samples = try PrometheusSamples(ProxyMetrics().render())
        #expect(samples.types["amodb_proxy_log_lines_dropped_total"] == "counter")
        #expect(try samples.value("amodb_proxy_log_lines_dropped_total", ["stream": "stdout"]) == Double(LineWriter.standardOutput.droppedLines))
        #expect(try samples.value("amodb_proxy_log_lines_dropped_total", ["stream": "stderr"]) == Double(LineWriter.standardError.droppedLines))
    }
}
