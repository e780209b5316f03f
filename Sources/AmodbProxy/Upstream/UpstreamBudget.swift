import Synchronization

/// Spends amodb's per-key budget: never more than `limit` calls in any sliding 60 s
/// window, background refreshes and retries included. It adopts amodb's own limit
/// headers when they are stricter, and treats the window as spent while amodb says 429.
///
/// The last quarter of a window's calls is kept for refreshes of entries that clients
/// are using (and retries they wait on): a flood of cold misses for rarely asked paths
/// cannot starve them.
public final class UpstreamBudget: Sendable {
    /// Who is asking.
    public enum Priority: Sendable {
        /// Refreshing an entry in use, or retrying for waiting clients: may use every call.
        case refresh
        /// A path with nothing stored: may not use the reserve.
        case miss
    }

    /// The answer to a request for one call.
    public enum Decision: Sendable, Equatable {
        case granted
        /// No call now; one may be possible after this many seconds.
        case denied(retryAfter: Double)
    }

    private struct State {
        /// When each call in the window was granted, oldest first.
        var sent: [Double] = []
        var exhaustedUntil: Double = 0
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

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes one call from the window, or says how long until one could be had.
    public func acquire(_ priority: Priority, now: Double) -> Decision {
        state.withLock { state in
            state.sent.removeAll { $0 <= now - Self.window }
            if now < state.exhaustedUntil { return .denied(retryAfter: state.exhaustedUntil - now) }
            let effectiveLimit = min(limit, state.upstreamLimit ?? limit)
            let needed = priority == .miss ? Self.reserve(of: effectiveLimit) + 1 : 1
            var available = effectiveLimit - state.sent.count
            var upstreamBound = false
            if let remaining = state.upstreamRemaining, now < state.upstreamResetAt, remaining < available {
                available = remaining
                upstreamBound = true
            }
            if available >= needed {
                state.sent.append(now)
                if let remaining = state.upstreamRemaining { state.upstreamRemaining = remaining - 1 }
                return .granted
            }
            if upstreamBound { return .denied(retryAfter: max(1, state.upstreamResetAt - now)) }
            // The call that frees enough room leaves the window first.
            let index = max(0, min(state.sent.count - 1, state.sent.count - effectiveLimit + needed - 1))
            let frees = state.sent.isEmpty ? now + Self.window : state.sent[index] + Self.window
            return .denied(retryAfter: max(1, frees - now))
        }
    }

    /// Calls of a window kept for refreshes: a quarter of it (none below 4).
    static func reserve(of limit: Int) -> Int {
        limit >= 4 ? limit / 4 : 0
    }

    /// Reads `X-RateLimit-*` / `RateLimit-*` (lower-cased names) from an amodb answer.
    /// `Reset` is taken as seconds from now, or as a Unix time when it is that large.
    public func observe(headers: [String: String], now: Double) {
        func number(_ names: String...) -> Double? {
            names.lazy.compactMap { headers[$0].flatMap { Double($0.trimmingSpaces()) } }.first
        }
        let limitHeader = number("x-ratelimit-limit", "ratelimit-limit")
        let remaining = number("x-ratelimit-remaining", "ratelimit-remaining")
        let reset = number("x-ratelimit-reset", "ratelimit-reset")
        state.withLock { state in
            if let limitHeader, limitHeader >= 1 { state.upstreamLimit = Int(limitHeader) }
            if let remaining, remaining >= 0 {
                state.upstreamRemaining = Int(remaining)
                let resetAt = reset.map { $0 > 1_000_000_000 ? $0 : now + $0 } ?? now + Self.window
                state.upstreamResetAt = resetAt
            }
        }
    }

    /// amodb said 429: no calls for `seconds` (its `Retry-After`).
    public func exhaust(for seconds: Double, now: Double) {
        state.withLock { $0.exhaustedUntil = max($0.exhaustedUntil, now + seconds) }
    }

    /// Calls granted in the current window.
    public func used(now: Double) -> Int {
        state.withLock { state in state.sent.filter { $0 > now - Self.window }.count }
    }
}
