import AmodbSockets
import Dispatch
import Glibc
import Testing

/// `Syscalls.epollWait` waits up to the time asked for a member of the set to be ready (an
/// event loop lingers that way after serving, instead of handing its queue back at once).
@Suite(.timeLimit(.minutes(1)))
struct EpollWaitTests {
    /// An epoll set watching the read end of a pipe, reported as token 7; the write end.
    private static func pipeSet() throws -> (epoll: Int32, reader: Int32, writer: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let epoll = try Syscalls.epollCreate()
        try Syscalls.epollAdd(epoll, ends[0], token: 7)
        return (epoll, ends[0], ends[1])
    }

    private static func closeAll(_ fds: Int32...) {
        for fd in fds { Syscalls.close(fd) }
    }

    @Test func aWaitEndsWhenAMemberBecomesReady() throws {
        let (epoll, reader, writer) = try Self.pipeSet()
        defer { Self.closeAll(epoll, reader, writer) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
            _ = write(writer, "x", 1)
        }
        var tokens = [UInt64](repeating: 0, count: 4)
        let count = tokens.withUnsafeMutableBufferPointer {
            Syscalls.epollWait(epoll, into: $0, waitingAtMost: 30_000_000_000)
        }
        #expect(count == 1)
        #expect(tokens[0] == 7)
    }

    @Test func aWaitWithNothingReadyLastsTheTimeAsked() throws {
        let (epoll, reader, writer) = try Self.pipeSet()
        defer { Self.closeAll(epoll, reader, writer) }
        var tokens = [UInt64](repeating: 0, count: 4)
        let start = DispatchTime.now().uptimeNanoseconds
        let count = tokens.withUnsafeMutableBufferPointer {
            Syscalls.epollWait(epoll, into: $0, waitingAtMost: 40_000_000)
        }
        #expect(count == 0)
        #expect(DispatchTime.now().uptimeNanoseconds - start >= 39_000_000)
    }

    @Test func withoutATimeItOnlyLooks() throws {
        let (epoll, reader, writer) = try Self.pipeSet()
        defer { Self.closeAll(epoll, reader, writer) }
        var tokens = [UInt64](repeating: 0, count: 4)
        #expect(tokens.withUnsafeMutableBufferPointer { Syscalls.epollWait(epoll, into: $0) } == 0)
        _ = write(writer, "x", 1)
        #expect(tokens.withUnsafeMutableBufferPointer { Syscalls.epollWait(epoll, into: $0) } == 1)
    }
}
