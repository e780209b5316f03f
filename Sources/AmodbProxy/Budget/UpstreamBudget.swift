import AmodbModels
import Synchronization

/// Spends amodb's per-key budget: never more than `limit` calls in any sliding 60 s
/// window, background refreshes and retries included. It adopts amodb's own limit
/// headers when they are stricter, and treats the window as spent while amodb says 429.
///
/// Misses come first when the window is tight: a refresh (`CallPriority.refresh`) is
/// granted only while the window is at most half spent, so the calls that remain go to
/// requests that have nothing stored to answer with (`slack(of:)`).
///
/// With `shares`, it also keeps each client's share of the calls for misses, taken with the
/// miss's call in one step (`acquire(_:client:now:)`): a lone replica's whole budget.
package final class UpstreamBudget: CallBudget, Sendable {
    /// Who is asking.
    package typealias Priority = CallPriority
    /// The answer to a request for one call.
    package typealias Decision = CallDecision

    /// A call in the window: when it counts from (its grant, then its answer), and its id in the ledger.
    private struct Sent {
        var at: Double
        var id: UInt64
    }

    private struct State {
        /// The calls in the window, oldest first.
        var sent: [Sent] = []
        /// The id the next call is given.
        var nextID: UInt64 = 0
        var exhaustedUntil: Double = 0
        /// Set by a 429 and cleared once a probe came back: while set, one call at a time.
        var awaitingProbe = false
        /// Until when the probe granted is outstanding (`nil`: none is).
        var probeUntil: Double?
        /// From amodb's headers: its limit, what it said remained, and when that resets.
        var upstreamLimit: Int?
        var upstreamRemaining: Int?
        var upstreamResetAt: Double = 0
    }

    /// Calls per minute at most (`AMODB_RATE_LIMIT`).
    package let limit: Int
    /// The window, in seconds.
    package static let window: Double = 60
    private let state = Mutex(State())
    private let shares: CallerShare?
    /// The longest a call to amodb can take, in seconds: how long a granted call may still
    /// reach amodb, how long a probe may stay out before another call may try (so a probe
    /// whose answer was lost does not close the window for good), and how much longer a call
    /// that got no answer counts (`completed`).
    let callTimeout: Double

    /// A budget of `limit` calls per window, with no client's share.
    package convenience init(limit: Int) {
        self.init(limit: limit, shares: nil)
    }

    /// A budget of `limit` calls per window whose misses also spend their client's `shares`;
    /// a probe after a 429 is out for `callTimeout` seconds at most.
    convenience init(limit: Int, shares: CallerShare?, callTimeout: Double = 30) {
        self.init(limit: limit, shares: shares, callTimeout: callTimeout, ledger: nil, now: 0)
    }

    /// A budget as above that writes each call to `ledger` before it goes out, and starts
    /// (at `now`) with the calls the ledger held: a restart does not forget the calls of the
    /// last minute. `reserve`: its calls are a fleet replica's reserve (only those are read
    /// back); otherwise it is a lone replica's whole window (every call is). A ledger that
    /// could not be read whole closes the window for a window and a call's time: its calls are unknown.
    init(
        limit: Int, shares: CallerShare?, callTimeout: Double = 30, ledger: CallLedger?, reserve: Bool = false,
        now: Double
    ) {
        self.limit = max(0, limit)
        self.shares = shares
        self.callTimeout = max(1, callTimeout)
        self.ledger = ledger
        self.reserve = reserve
        guard let loaded = ledger?.loaded else { return }
        state.withLock { state in
            for call in loaded.calls where call.reserve || !reserve {
                Self.insert(Sent(at: call.until, id: state.nextID), into: &state.sent)
                state.nextID += 1
            }
            if loaded.damaged { state.exhaustedUntil = now + Self.window + self.callTimeout }
        }
    }

    /// Where each call is written before it goes out (`nil`: memory only).
    private let ledger: CallLedger?
    /// Whether this window is a fleet replica's reserve (its calls marked so in the ledger).
    private let reserve: Bool
    /// A call's name in the ledger: this process's start and a counter, so no two processes share one.
    private static let ledgerPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    private func ledgerID(_ id: UInt64) -> String {
        Self.ledgerPrefix + "-" + String(id, radix: 36)
    }

    /// Takes one call from the window and, for a miss of a `client`, one of its share with
    /// it (`CallerShare.take`): neither is taken unless both have one.
    func acquire(_ priority: Priority, client: String?, now: Double) -> Decision {
        guard priority == .miss, let client, let shares else { return acquire(priority, now: now) }
        return shares.take(client, now: now) { acquire(.miss, now: now) }
    }

    func shareStanding(for client: String, now: Double) -> ShareStanding? {
        shares?.standing(of: client, now: now)
    }

    var trackedClients: Int { shares?.count ?? 0 }

    /// Takes one call from the window, or says how long until one could be had.
    package func acquire(_ priority: Priority, now: Double) -> Decision {
        let (decision, id) = state.withLock { state -> (Decision, UInt64?) in
            let decision = take(priority, now: now, &state)
            return (decision, decision.isGranted ? state.nextID - 1 : nil)
        }
        if let ledger, let id { ledger.granted(ledgerID(id), until: now + callTimeout, reserve: reserve) }
        return decision
    }

    /// Keeps the window oldest first: a call read back from the ledger may count until after now.
    private static func insert(_ call: Sent, into sent: inout [Sent]) {
        let index = sent.lastIndex { $0.at <= call.at }.map { $0 + 1 } ?? 0
        sent.insert(call, at: index)
    }

    private func take(_ priority: Priority, now: Double, _ state: inout State) -> Decision {
        state.sent.removeAll { $0.at <= now - Self.window }
        if now < state.exhaustedUntil { return .denied(retryAfter: state.exhaustedUntil - now) }
        if state.awaitingProbe, let until = state.probeUntil, now < until {
            return .denied(retryAfter: min(Self.probePoll, until - now))
        }
        let effectiveLimit = min(limit, state.upstreamLimit ?? limit)
        let needed = priority == .refresh ? Self.slack(of: effectiveLimit) : 1
        var available = effectiveLimit - state.sent.count
        var upstreamBound = false
        if let remaining = state.upstreamRemaining, now < state.upstreamResetAt, remaining < available {
            available = remaining
            upstreamBound = true
        }
        if available >= needed {
            Self.insert(Sent(at: now, id: state.nextID), into: &state.sent)
            state.nextID += 1
            if let remaining = state.upstreamRemaining { state.upstreamRemaining = remaining - 1 }
            guard state.awaitingProbe else { return .granted }
            state.probeUntil = now + callTimeout
            return .probe
        }
        if upstreamBound { return .denied(retryAfter: max(1, state.upstreamResetAt - now)) }
        // The call that frees enough room leaves the window first.
        let index = max(0, min(state.sent.count - 1, state.sent.count - effectiveLimit + needed - 1))
        let frees = state.sent.isEmpty ? now + Self.window : state.sent[index].at + Self.window
        return .denied(retryAfter: max(Self.shortestWait, frees - now))
    }

    /// The calls a window must have left for a refresh to take one: more than half of it,
    /// so that after the refresh the window is at most half spent.
    static func slack(of limit: Int) -> Int {
        limit / 2 + 1
    }

    /// The shortest wait a denial names, in seconds: the exact time a call frees (a miss
    /// waiting for one wakes then), never zero.
    static let shortestWait: Double = 0.001

    /// How often a miss waiting on a probe's answer asks again, in seconds.
    static let probePoll: Double = 0.1

    /// The limits amodb may state that are taken as given; anything outside is ignored.
    static let limitRange = 1...100_000
    /// The longest wait a reset may announce, in seconds: a day.
    static let longestReset: Double = 86_400

    /// Reads `X-RateLimit-*` / `RateLimit-*` (lower-cased names) from an amodb answer.
    /// Every number must be finite and in range (limits 1–100,000; a reset at most a day
    /// away); `Reset` is read by its size as seconds from now, a Unix time, or milliseconds
    /// since 1970. Returns the names of the fields ignored.
    @discardableResult
    package func observe(headers: [String: String], now: Double) -> [String] {
        let read = Self.read(headers: headers, now: now)
        state.withLock { state in
            if let limit = read.limit { state.upstreamLimit = limit }
            if let remaining = read.remaining {
                state.upstreamRemaining = remaining
                state.upstreamResetAt = read.resetAt ?? now + Self.window
            }
        }
        return read.ignored
    }

    /// What amodb's rate-limit headers say, read by the rules of `observe` (one reader for
    /// the in-memory budget and the one replicas share): its limit, what remains, when
    /// that resets, and the names of the fields ignored.
    static func read(headers: [String: String], now: Double) -> (
        limit: Int?, remaining: Int?, resetAt: Double?, ignored: [String]
    ) {
        var ignored: [String] = []
        func number(_ names: String...) -> (name: String, value: Double)? {
            for name in names {
                guard let text = headers[name] else { continue }
                guard let value = Double(text.trimmingSpaces()), value.isFinite, value >= 0 else {
                    ignored.append(name)
                    return nil
                }
                return (name, value)
            }
            return nil
        }
        var limit: Int?
        if let (name, value) = number("x-ratelimit-limit", "ratelimit-limit") {
            if value >= 1, value <= Double(Self.limitRange.upperBound) {
                limit = value.checkedInt(.down, clampedTo: Self.limitRange)
            } else {
                ignored.append(name)
            }
        }
        // Remaining is at most the limit amodb could state; beyond that it says nothing useful.
        let remaining =
            number("x-ratelimit-remaining", "ratelimit-remaining").map {
                $0.value.checkedInt(.down, clampedTo: 0...Self.limitRange.upperBound)
            } ?? nil
        var resetAt: Double?
        if let (name, value) = number("x-ratelimit-reset", "ratelimit-reset") {
            resetAt = Self.resetTime(value, now: now)
            if resetAt == nil { ignored.append(name) }
        }
        return (limit, remaining, resetAt, ignored)
    }

    /// When a `Reset` of `value` falls, read by its size: below 10⁹ seconds from now, below
    /// 10¹² a Unix time, below 10¹⁵ milliseconds since 1970; `nil` when that is more than
    /// a day away (or the value is none of these).
    static func resetTime(_ value: Double, now: Double) -> Double? {
        let at: Double
        switch value {
        case ..<1e9: at = now + value
        case ..<1e12: at = value
        case ..<1e15: at = value / 1000
        default: return nil
        }
        guard at - now <= longestReset else { return nil }
        return max(now, at)
    }

    /// amodb said 429: no calls for `seconds` (its `Retry-After`), then one probe before any other call.
    package func exhaust(for seconds: Double, now: Double) {
        // Finite and at most a day, whoever computed it.
        let wait = seconds.isFinite ? min(max(0, seconds), Self.longestReset) : Self.longestReset
        state.withLock { state in
            state.exhaustedUntil = max(state.exhaustedUntil, now + wait)
            state.awaitingProbe = true
            state.probeUntil = nil
        }
    }

    /// The probe came back other than 429: calls are granted as before the pause.
    func reopen(now: Double) {
        state.withLock { state in
            state.awaitingProbe = false
            state.probeUntil = nil
        }
    }

    /// The call granted at `grantedAt` counts as made at `now`, or a call's time later when
    /// it got no answer (`CallBudget.completed`); one no longer in the window (it left it
    /// already) is counted afresh.
    func completed(grantedAt: Double, now: Double, answered: Bool) {
        let at = max(answered ? now : now + callTimeout, grantedAt)
        let id = state.withLock { state -> UInt64 in
            var call = Sent(at: at, id: state.nextID)
            if let index = state.sent.lastIndex(where: { $0.at == grantedAt }) {
                call.id = state.sent[index].id
                state.sent.remove(at: index)
            } else {
                state.nextID += 1
            }
            Self.insert(call, into: &state.sent)
            return call.id
        }
        ledger?.completed(ledgerID(id), at: at)
    }

    /// The calls in the window at `now`, by their ledger ids, with when each counts from (for
    /// a fleet replica's reserve: what it puts back into the fleet's window).
    func calls(now: Double) -> [(id: String, at: Double)] {
        state.withLock { state in
            state.sent.filter { $0.at > now - Self.window }.map { (ledgerID($0.id), $0.at) }
        }
    }

    /// Calls granted in the current window.
    package func used(now: Double) -> Int {
        state.withLock { state in state.sent.filter { $0.at > now - Self.window }.count }
    }
}
