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
public final class UpstreamBudget: CallBudget, Sendable {
    /// Who is asking.
    public typealias Priority = CallPriority
    /// The answer to a request for one call.
    public typealias Decision = CallDecision

    private struct State {
        /// When each call in the window was granted, oldest first.
        var sent: [Double] = []
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
    public let limit: Int
    /// The window, in seconds.
    public static let window: Double = 60
    private let state = Mutex(State())
    private let shares: CallerShare?
    /// How long a probe may stay out before another call may try, in seconds: longer than
    /// a call to amodb can take, so a probe whose answer was lost does not close the window for good.
    let probeTimeout: Double

    /// A budget of `limit` calls per window, with no client's share.
    public convenience init(limit: Int) {
        self.init(limit: limit, shares: nil)
    }

    /// A budget of `limit` calls per window whose misses also spend their client's `shares`;
    /// a probe after a 429 is out for `probeTimeout` seconds at most.
    init(limit: Int, shares: CallerShare?, probeTimeout: Double = 30) {
        self.limit = max(1, limit)
        self.shares = shares
        self.probeTimeout = max(1, probeTimeout)
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

    /// Counts a call granted elsewhere (the fleet's window) as one of this window's, and of
    /// `client`'s share when given: a Redis outage then starts with the calls already made.
    func record(_ client: String?, now: Double) {
        state.withLock { state in
            state.sent.removeAll { $0 <= now - Self.window }
            state.sent.append(now)
            if state.sent.count > limit { state.sent.removeFirst(state.sent.count - limit) }
            if let remaining = state.upstreamRemaining { state.upstreamRemaining = max(0, remaining - 1) }
        }
        if let client { shares?.record(client, now: now) }
    }

    /// Takes one call from the window, or says how long until one could be had.
    public func acquire(_ priority: Priority, now: Double) -> Decision {
        state.withLock { state in
            state.sent.removeAll { $0 <= now - Self.window }
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
                state.sent.append(now)
                if let remaining = state.upstreamRemaining { state.upstreamRemaining = remaining - 1 }
                guard state.awaitingProbe else { return .granted }
                state.probeUntil = now + probeTimeout
                return .probe
            }
            if upstreamBound { return .denied(retryAfter: max(1, state.upstreamResetAt - now)) }
            // The call that frees enough room leaves the window first.
            let index = max(0, min(state.sent.count - 1, state.sent.count - effectiveLimit + needed - 1))
            let frees = state.sent.isEmpty ? now + Self.window : state.sent[index] + Self.window
            return .denied(retryAfter: max(Self.shortestWait, frees - now))
        }
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
    public func observe(headers: [String: String], now: Double) -> [String] {
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
    public func exhaust(for seconds: Double, now: Double) {
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

    /// The call granted at `grantedAt` counts as made at `now` (`CallBudget.completed`); one
    /// no longer in the window (it left it already) is counted afresh.
    func completed(grantedAt: Double, now: Double) {
        state.withLock { state in
            if let index = state.sent.lastIndex(of: grantedAt) { state.sent.remove(at: index) }
            let at = max(now, grantedAt)
            let index = state.sent.lastIndex { $0 <= at }.map { $0 + 1 } ?? 0
            state.sent.insert(at, at: index)
        }
    }

    /// Closes the window until `until` (a replica that lost the fleet's window, see
    /// `RedisCallBudget`): no call, not even a probe, before then.
    func close(until: Double) {
        state.withLock { $0.exhaustedUntil = max($0.exhaustedUntil, until) }
    }

    /// Calls granted in the current window.
    public func used(now: Double) -> Int {
        state.withLock { state in state.sent.filter { $0 > now - Self.window }.count }
    }
}
