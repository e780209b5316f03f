import AmodbHTTP

/// The limit headers amodb puts on every answer to a known key, in both spellings:
/// `X-RateLimit-*` and the IETF draft's `RateLimit-*` (draft-ietf-httpapi-ratelimit-headers).
///
/// `Reset` is in **delta seconds** (as the IETF draft defines it), not an epoch time:
/// the seconds until the oldest call in the window leaves it and a slot frees.
struct RateLimitHeaders: Sendable, Equatable {
    /// Calls allowed per 60-second window.
    var limit: Int
    /// Calls left in the window after this one.
    var remaining: Int
    /// Seconds until a slot frees, at least 1.
    var reset: Int

    /// Adds the fields to a response's headers.
    func apply(to headers: inout HTTPHeaders) {
        headers.set("X-RateLimit-Limit", String(limit))
        headers.set("X-RateLimit-Remaining", String(remaining))
        headers.set("X-RateLimit-Reset", String(reset))
        headers.set("RateLimit-Limit", String(limit))
        headers.set("RateLimit-Remaining", String(remaining))
        headers.set("RateLimit-Reset", String(reset))
        headers.set("RateLimit-Policy", "\(limit);w=60")
    }
}
