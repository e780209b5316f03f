import Dispatch
import Testing

@testable import AmodbHTTP

private func at(_ seconds: Double) -> DispatchTime { ConnectionClock.at(seconds) }

private func deadlines() -> ConnectionDeadlines {
    ConnectionDeadlines(timeouts: ConnectionClock.timeouts, openedAt: at(0))
}

struct ConnectionDeadlinesTests {
    @Test func aTrickledHeadKeepsTheDeadlineOfItsFirstByte() {
        var clock = deadlines()
        clock.headArriving(at: at(1))
        clock.headArriving(at: at(5))
        clock.headArriving(at: at(10))
        #expect(clock.next(quiet: true) == at(11))
        #expect(clock.expired(at: at(10.9), quiet: true) == nil)
        #expect(clock.expired(at: at(11), quiet: true) == .head)
    }

    @Test func aBodyHasADeadlineOfItsOwnAndIsNotActivity() {
        var clock = deadlines()
        clock.headArriving(at: at(50))
        clock.bodyArriving(at: at(55))
        // The idle timeout (60 s from opening) does not run while a body arrives, and the
        // body does not move it: only its own deadline counts.
        #expect(clock.next(quiet: true) == at(75))
        #expect(clock.expired(at: at(70), quiet: true) == nil)
        #expect(clock.expired(at: at(75), quiet: true) == .body)
    }

    @Test func idleTimeCountsFromTheLastAnswerSent() {
        var clock = deadlines()
        clock.headArriving(at: at(1))
        clock.requestRead()
        #expect(clock.next(quiet: false) == nil, "waiting on the responder: no deadline of ours")
        clock.writeDrained(at: at(40), answered: true)
        #expect(clock.next(quiet: true) == at(100))
        clock.writeDrained(at: at(70), answered: false)  // a 100 Continue, say: not an answer
        #expect(clock.expired(at: at(100), quiet: true) == .idle)
    }

    @Test func aStalledWriteIsTheMostPressing() {
        var clock = deadlines()
        clock.writeBlocked(at: at(1))
        clock.writeBlocked(at: at(20))  // still blocked: the first moment counts
        clock.headArriving(at: at(25))
        #expect(clock.next(quiet: false) == at(31))
        #expect(clock.expired(at: at(40), quiet: false) == .write)
        clock.writeDrained(at: at(31), answered: true)
        #expect(clock.next(quiet: false) == at(35))
    }

    @Test(arguments: [
        ("new, nothing sent yet", ConnectionDeadlines.Reclaimable.slow, 0.0),
        ("head arriving", .slow, 3.0),
        ("body arriving", .slow, 4.0),
        ("idle after an answer", .idle, 9.0),
    ])
    func ranksForMakingRoom(_ state: String, _ kind: ConnectionDeadlines.Reclaimable, _ since: Double) {
        var clock = deadlines()
        switch state {
        case "head arriving":
            clock.headArriving(at: at(3))
        case "body arriving":
            clock.headArriving(at: at(3))
            clock.bodyArriving(at: at(4))
        case "idle after an answer":
            clock.requestRead()
            clock.writeDrained(at: at(9), answered: true)
        default:
            break
        }
        #expect(clock.reclaimable(quiet: true)?.kind == kind)
        #expect(clock.reclaimable(quiet: true)?.since == at(since))
        #expect(clock.reclaimable(quiet: false) == nil, "a connection owing an answer is never closed for room")
    }

    @Test func slowComesBeforeIdleWhenMakingRoom() {
        #expect(ConnectionDeadlines.Reclaimable.closing < .slow)
        #expect(ConnectionDeadlines.Reclaimable.slow < .idle)
    }
}
