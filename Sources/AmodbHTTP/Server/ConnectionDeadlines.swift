import Dispatch

/// A connection's deadlines as a value: the connection reports what began and ended (a
/// head arriving, a body, an answer sent, the client not reading), and asks which deadline
/// comes next, which has passed, and how it ranks when the server needs room. Pure: it
/// takes the time as an argument, so it is tested without sockets or clocks.
///
/// Only what the server asks for is activity: a head or body arriving runs on its own
/// deadline, and the idle timeout counts from the last answer sent.
struct ConnectionDeadlines: Sendable {
    /// The deadline that passed, and so what the connection does.
    enum Expiry: Sendable, Equatable {
        /// The client stopped reading our answer: close.
        case write
        /// The head did not arrive in time (slowloris): 408, close.
        case head
        /// The body did not arrive in time (a trickle): 408, close.
        case body
        /// Nothing asked for a while: close.
        case idle
    }

    /// How a connection may give up its slot when the server is full, slowest first.
    enum Reclaimable: UInt64, Sendable, Comparable {
        /// Closing anyway (lingering after its last answer).
        case closing = 1
        /// A head or body still arriving, or nothing sent yet on a new connection.
        case slow = 2
        /// An idle keep-alive connection.
        case idle = 3

        /// Closing first, idle last.
        static func < (lhs: Reclaimable, rhs: Reclaimable) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    let timeouts: HTTPTimeouts
    /// When the head being read began to arrive.
    private(set) var headStartedAt: DispatchTime?
    /// When the body being read began (its head arrived).
    private(set) var bodyStartedAt: DispatchTime?
    /// When the last answer was sent, or the connection opened.
    private(set) var idleSince: DispatchTime
    /// Since when our output has been waiting for the client to read.
    private(set) var writeBlockedSince: DispatchTime?
    /// Whether any request has been read whole (a new connection has not).
    private(set) var hasHadRequest = false

    init(timeouts: HTTPTimeouts, openedAt: DispatchTime) {
        self.timeouts = timeouts
        idleSince = openedAt
    }

    /// Part of a head arrived; its deadline runs from the first part, however it trickles.
    mutating func headArriving(at now: DispatchTime) {
        if headStartedAt == nil { headStartedAt = now }
    }

    /// A head arrived whose body follows: the body's deadline starts.
    mutating func bodyArriving(at now: DispatchTime) {
        headStartedAt = nil
        bodyStartedAt = now
    }

    /// A request was read whole, body and all.
    mutating func requestRead() {
        headStartedAt = nil
        bodyStartedAt = nil
        hasHadRequest = true
    }

    /// Nothing of a next request is buffered: no head is on its way.
    mutating func noHeadPending() {
        headStartedAt = nil
    }

    /// No more requests are read (draining, refused or the peer finished): no reading deadlines.
    mutating func stopReading() {
        headStartedAt = nil
        bodyStartedAt = nil
    }

    /// The kernel would take no more of our output.
    mutating func writeBlocked(at now: DispatchTime) {
        if writeBlockedSince == nil { writeBlockedSince = now }
    }

    /// Everything queued was sent; `answered` says an answer was among it, which is activity.
    mutating func writeDrained(at now: DispatchTime, answered: Bool) {
        writeBlockedSince = nil
        if answered { idleSince = now }
    }

    /// Whether a request is partly read.
    var isReadingRequest: Bool { headStartedAt != nil || bodyStartedAt != nil }

    /// The earliest deadline; `quiet` says the connection is open with no answer owed or
    /// unsent (only then does the idle timeout run). Nil: waiting on the responder.
    func next(quiet: Bool) -> DispatchTime? {
        // No array: this runs after every answer, and must not allocate.
        var earliest: DispatchTime?
        func consider(_ deadline: DispatchTime) {
            if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        if let writeBlockedSince { consider(writeBlockedSince + timeouts.writeSeconds) }
        if let headStartedAt { consider(headStartedAt + timeouts.requestHeadSeconds) }
        if let bodyStartedAt { consider(bodyStartedAt + timeouts.requestBodySeconds) }
        if quiet, !isReadingRequest { consider(idleSince + timeouts.idleSeconds) }
        return earliest
    }

    /// The deadline that has passed at `now`, if any, the most pressing first.
    func expired(at now: DispatchTime, quiet: Bool) -> Expiry? {
        if let writeBlockedSince, writeBlockedSince + timeouts.writeSeconds <= now { return .write }
        if let headStartedAt, headStartedAt + timeouts.requestHeadSeconds <= now { return .head }
        if let bodyStartedAt, bodyStartedAt + timeouts.requestBodySeconds <= now { return .body }
        if quiet, !isReadingRequest, idleSince + timeouts.idleSeconds <= now { return .idle }
        return nil
    }

    /// How the connection ranks for closing when the server is full, and since when; nil
    /// when it must not be closed (`quiet` false: an answer is owed or unsent).
    func reclaimable(quiet: Bool) -> (kind: Reclaimable, since: DispatchTime)? {
        guard quiet else { return nil }
        if let started = headStartedAt ?? bodyStartedAt { return (.slow, started) }
        // A new connection gets the same grace to send its first head as a slow one.
        if !hasHadRequest { return (.slow, idleSince) }
        return (.idle, idleSince)
    }
}
