import Dispatch
import Testing

@testable import AmodbHTTP

private func at(_ seconds: Double) -> DispatchTime { ConnectionClock.at(seconds) }

/// Performs a machine's actions the way `Connection` does, without a socket: it records
/// what was asked, what went on the wire, and the reading, writing and timer state.
private struct Driver {
    var machine: ConnectionStateMachine
    /// Requests handed to the responder, with their sequence numbers, in order.
    var asked: [(path: String, sequence: Int)] = []
    /// Statuses the server answered itself.
    var refused: [Int] = []
    /// Bytes the kernel took.
    var wire: [UInt8] = []
    /// `sendmsg` calls made.
    var sends = 0
    /// Bytes the kernel takes before it reports "would block" (nil: unlimited).
    var kernelRoom: Int?
    var readingPaused = false
    var waitingForWritable = false
    var timer: DispatchTime?
    var halfClosed = false
    var closed: (reset: Bool, at: Int)?
    /// Answers the responder gives at once (nil: later, by `deliver`).
    var answer: (String) -> HTTPResponse? = { path in HTTPResponse(status: 200, body: Array(path.utf8)) }

    init(limits: HTTPLimits = HTTPLimits()) {
        machine = ConnectionStateMachine(limits: limits, timeouts: ConnectionClock.timeouts, openedAt: at(0))
        perform(machine.start())
    }

    var text: String { String(decoding: wire, as: UTF8.self) }

    mutating func receive(_ text: String, at time: Double = 1) {
        perform(machine.bytesRead(Array(text.utf8), at: at(time)), at: time)
    }

    mutating func deliver(_ sequence: Int, _ path: String, at time: Double = 1) {
        var delivered: [(sequence: Int, response: HTTPResponse)] = [
            (sequence, HTTPResponse(status: 200, body: Array(path.utf8)))
        ]
        perform(machine.responsesReady(&delivered, at: at(time)), at: time)
    }

    mutating func perform(_ first: [ConnectionStateMachine.Action], at time: Double = 1) {
        var work = first
        var ready: [(sequence: Int, response: HTTPResponse)] = []
        var wantsWrite = false
        while true {
            for action in work {
                guard closed == nil else { continue }
                switch action {
                case .read, .discardInput: break
                case .respond(let sequence):
                    guard let request = machine.takeRequest(sequence) else { continue }
                    asked.append((request.path, sequence))
                    if let response = answer(request.path) { ready.append((sequence, response)) }
                case .refused(let status): refused.append(status)
                case .write: wantsWrite = true
                case .waitForWritable: waitingForWritable = true
                case .stopWaitingForWritable: waitingForWritable = false
                case .pauseReading: readingPaused = true
                case .resumeReading: readingPaused = false
                case .armTimer(let deadline): timer = deadline
                case .shutdownWrite: halfClosed = true
                case .close(let reset): closed = (reset, wire.count)
                }
            }
            if !ready.isEmpty {
                work = machine.responsesReady(&ready, at: at(time))
            } else if wantsWrite {
                wantsWrite = false
                work = write(at: time)
            } else {
                return
            }
        }
    }

    private mutating func write(at time: Double) -> [ConnectionStateMachine.Action] {
        sends += 1
        let pending = machine.pendingOutput.bytes
        let taken = min(pending.count, kernelRoom ?? .max)
        guard taken > 0 else { return machine.writeWouldBlock(at: at(time)) }
        wire += pending[..<taken]
        kernelRoom = kernelRoom.map { $0 - taken }
        return machine.didWrite(taken, at: at(time))
    }

    /// The client reads everything: the kernel has room again.
    mutating func clientReads(at time: Double) {
        kernelRoom = nil
        perform([.write], at: time)
    }

    /// Statuses of the answers on the wire, in order.
    var statuses: [Int] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }
}

private func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: x\r\n\(extra)\r\n"
}

struct ConnectionStateMachineTests {
    @Test func aRequestIsAskedForAnsweredWrittenAndTheIdleDeadlineArmed() {
        var driver = Driver()
        #expect(driver.timer == at(60), "a new connection has the idle deadline")
        driver.answer = { _ in nil }
        driver.receive(get("/a"))
        #expect(driver.asked.map(\.path) == ["/a"])
        #expect(driver.wire.isEmpty)
        driver.deliver(0, "/a", at: 2)
        #expect(driver.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(driver.text.hasSuffix("Content-Length: 2\r\n\r\n/a"))
        #expect(driver.closed == nil)
        let again = driver.machine.deadlinePassed(at: at(61))
        #expect(again.isEmpty == false, "the deadline moved with the answer: re-armed, not closed")
        driver.perform(again)
        #expect(driver.closed == nil)
        driver.perform(driver.machine.deadlinePassed(at: at(62)))
        #expect(driver.closed?.reset == false, "idle 60 s after the answer at 2 s")
    }

    @Test func pipelinedRequestsReadTogetherAreWrittenWithOneSend() {
        var driver = Driver()
        driver.receive((1...10).map { get("/\($0)") }.joined())
        #expect(driver.asked.map(\.sequence) == Array(0..<10))
        #expect(driver.sends == 1)
        #expect(driver.statuses == Array(repeating: 200, count: 10))
        #expect(driver.text.hasSuffix("\r\n\r\n/10"))
    }

    @Test func answersFinishingOutOfOrderAreWrittenInRequestOrder() throws {
        var driver = Driver()
        driver.answer = { _ in nil }
        driver.receive(get("/first") + get("/second"))
        driver.deliver(1, "/second")
        #expect(driver.wire.isEmpty, "the first answer is still owed")
        driver.deliver(0, "/first")
        let first = try #require(driver.text.firstRange(of: "/first"))
        let second = try #require(driver.text.firstRange(of: "/second"))
        #expect(first.lowerBound < second.lowerBound)
    }

    @Test(arguments: [1, 2, 7, 64])
    func aRequestSplitAnywhereGivesTheSameAnswers(pieceSize: Int) {
        let input = Array((get("/x") + get("/y", "Content-Length: 3\r\n") + "abc" + get("/z")).utf8)
        var whole = Driver()
        whole.perform(whole.machine.bytesRead(input, at: at(1)))
        var split = Driver()
        for start in stride(from: 0, to: input.count, by: pieceSize) {
            split.perform(split.machine.bytesRead(input[start..<min(start + pieceSize, input.count)], at: at(1)))
        }
        #expect(split.asked.map(\.path) == ["/x", "/y", "/z"])
        #expect(split.asked.map(\.path) == whole.asked.map(\.path))
        #expect(split.statuses == whole.statuses)
    }

    @Test func pipeliningBeyondTheLimitWaitsForAnswers() {
        var limits = HTTPLimits()
        limits.maxPipelinedRequests = 4
        var driver = Driver(limits: limits)
        driver.answer = { _ in nil }
        driver.receive((0..<6).map { get("/\($0)") }.joined())
        #expect(driver.asked.count == 4)
        #expect(driver.readingPaused)
        driver.deliver(0, "/0")
        #expect(driver.asked.count == 5, "one answered: one more is read")
        for sequence in 1...5 { driver.deliver(sequence, "/\(sequence)") }
        #expect(driver.statuses.count == 6)
        #expect(!driver.readingPaused)
    }

    @Test func aClientThatStopsReadingStopsBeingReadAndIsDroppedAtTheWriteDeadline() {
        var driver = Driver()
        driver.kernelRoom = 10
        driver.receive(get("/a"), at: 5)
        #expect(driver.wire.count == 10)
        #expect(driver.waitingForWritable)
        #expect(driver.readingPaused)
        #expect(driver.timer == at(35))
        driver.perform(driver.machine.deadlinePassed(at: at(35)))
        #expect(driver.closed != nil)
    }

    @Test func writingResumesWhenTheClientReads() {
        var driver = Driver()
        driver.kernelRoom = 10
        driver.receive(get("/a"))
        driver.clientReads(at: 2)
        #expect(driver.text.hasSuffix("/a"))
        #expect(!driver.waitingForWritable)
        #expect(!driver.readingPaused)
    }

    @Test func unsentOutputStaysWithinItsBound() {
        var driver = Driver()
        let big = HTTPResponse(status: 200, body: Array(repeating: 98, count: 100 * 1024))
        driver.answer = { _ in big }
        driver.kernelRoom = 0
        driver.receive((0..<8).map { get("/\($0)") }.joined())
        #expect(driver.machine.pendingOutput.unsentBytes <= ConnectionStateMachine.maxUnsentBytes)
        #expect(driver.machine.pendingOutput.unsentBytes > 100 * 1024)
        driver.clientReads(at: 2)
        #expect(driver.statuses.count == 8, "held answers go once there is room")
    }

    @Test func aSlowHeadGets408AndTheConnectionLingersThenCloses() {
        var driver = Driver()
        driver.receive("GET /slow HTTP/1.1\r\nHo", at: 1)
        #expect(driver.timer == at(11))
        driver.perform(driver.machine.deadlinePassed(at: at(11)), at: 11)
        #expect(driver.refused == [408])
        #expect(driver.statuses == [408])
        #expect(driver.text.contains("Connection: close\r\n"))
        #expect(driver.halfClosed)
        #expect(driver.closed == nil, "lingers so the peer's leftovers do not reset the answer")
        #expect(driver.machine.readable().contains { if case .discardInput = $0 { true } else { false } })
        driver.perform(driver.machine.deadlinePassed(at: at(13)))
        #expect(driver.closed != nil)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        ("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 9999\r\n\r\n", 413),
    ])
    func malformedInputIsAnsweredAndNothingAfterItIsRead(input: String, status: Int) {
        var driver = Driver()
        driver.receive(input + get("/after"))
        #expect(driver.refused == [status])
        #expect(driver.statuses == [status])
        #expect(driver.asked.isEmpty)
        #expect(driver.halfClosed)
    }

    @Test func theEndOfInputAnswersWhatWasAskedThenCloses() {
        var driver = Driver()
        driver.answer = { _ in nil }
        driver.receive(get("/a"))
        driver.perform(driver.machine.endOfInput(at: at(1)))
        #expect(driver.readingPaused)
        driver.deliver(0, "/a")
        #expect(driver.text.contains("Connection: close\r\n"))
        #expect(driver.halfClosed)
    }

    @Test func shutdownClosesAnIdleConnectionAtOnceAndABusyOneAfterItsAnswer() {
        var idle = Driver()
        idle.perform(idle.machine.shutdownRequested(at: at(1)))
        #expect(idle.closed != nil)

        var busy = Driver()
        busy.answer = { _ in nil }
        busy.receive(get("/a"))
        busy.perform(busy.machine.shutdownRequested(at: at(1)))
        #expect(busy.closed == nil)
        busy.deliver(0, "/a")
        #expect(busy.text.contains("Connection: close\r\n"))
        #expect(busy.halfClosed)
    }

    /// Input is watched level-triggered (`EventLoop`): a connection that reads no more
    /// requests must stop being told of input it will not read, or its loop spins on it
    /// until the answer is out. Lingering reads (and drops) the leftovers again.
    @Test func aConnectionThatReadsNoMoreRequestsStopsWatchingItsInput() {
        var driver = Driver()
        driver.answer = { _ in nil }
        driver.receive(get("/last", "Connection: close\r\n") + "leftovers")
        driver.perform(driver.machine.readable())
        #expect(driver.readingPaused, "draining: input is no longer watched")
        driver.deliver(0, "/last")
        #expect(driver.halfClosed)
        #expect(!driver.readingPaused, "lingering: the leftovers are read and dropped")
    }

    @Test func anIdleConnectionHoldsNoReadBuffer() {
        var driver = Driver()
        driver.receive(get("/a") + get("/b"))
        #expect(driver.statuses == [200, 200])
        #expect(driver.machine.inboundCapacity == 0)
    }

    /// A kept-alive connection keeps the room one request's answer needs, so the next
    /// request allocates no queue; room grown by a pipelined burst is given back when idle.
    @Test func anIdleConnectionKeepsOneRequestsAnswerQueuesAndGivesABurstsBack() {
        var driver = Driver()
        driver.receive(get("/a"))
        let kept = driver.machine.answerQueueCapacity
        #expect(kept.answers >= 1 && kept.answers <= ConnectionStateMachine.keptQueueCapacity)
        #expect(kept.pieces >= 1 && kept.pieces <= ConnectionStateMachine.keptQueueCapacity)
        driver.receive((1...12).map { get("/\($0)") }.joined())
        #expect(driver.statuses.count == 13)
        let afterBurst = driver.machine.answerQueueCapacity
        #expect(afterBurst.answers <= ConnectionStateMachine.keptQueueCapacity)
        #expect(afterBurst.pieces <= ConnectionStateMachine.keptQueueCapacity)
    }

    /// Action arrays handed back are reused, unless a burst grew them: then they are let go,
    /// so connections that once took many pipelined requests do not keep the room.
    @Test(arguments: [(1, true), (2, true), (64, false)])
    func performedActionArraysAreReusedUnlessABurstGrewThem(capacity: Int, kept: Bool) {
        var machine = ConnectionStateMachine(limits: HTTPLimits(), timeouts: ConnectionClock.timeouts, openedAt: at(0))
        var performed = machine.start()
        performed.reserveCapacity(capacity)
        let room = performed.capacity
        machine.recycle(&performed)
        #expect(machine.actionCapacity == (kept ? room : 0))
    }

    @Test func aSlowPeerIsReclaimableAndABusyOneIsNot() {
        var driver = Driver()
        driver.answer = { _ in nil }
        #expect(driver.machine.reclaimable()?.kind == .slow, "nothing sent yet")
        driver.receive(get("/a"))
        #expect(driver.machine.reclaimable() == nil, "an answer is owed")
        driver.deliver(0, "/a", at: 3)
        #expect(driver.machine.reclaimable()?.kind == .idle)
        #expect(driver.machine.reclaimable()?.since == at(3))
    }

    @Test func expectContinueIsAnsweredBeforeTheBody() {
        var driver = Driver()
        driver.receive("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        #expect(driver.text == "HTTP/1.1 100 Continue\r\n\r\n")
        driver.receive("abc")
        #expect(driver.statuses == [100, 200])
    }
}
