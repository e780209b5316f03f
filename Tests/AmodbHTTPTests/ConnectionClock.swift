import Dispatch

@testable import AmodbHTTP

/// Moments and deadlines shared by the tests of a connection's pure parts (its deadlines
/// and its state machine), which take the time as an argument instead of reading a clock.
enum ConnectionClock {
    /// A moment `seconds` after an arbitrary origin.
    static func at(_ seconds: Double) -> DispatchTime {
        DispatchTime(uptimeNanoseconds: 1_000_000_000_000 + UInt64(seconds * 1_000_000_000))
    }

    /// Head 10 s, body 20 s, idle 60 s, write 30 s: each distinct, so a test sees which one passed.
    static var timeouts: HTTPTimeouts {
        var timeouts = HTTPTimeouts()
        timeouts.requestHeadSeconds = 10
        timeouts.requestBodySeconds = 20
        timeouts.idleSeconds = 60
        timeouts.writeSeconds = 30
        return timeouts
    }
}
