/// How the sandbox answers a scripted path instead of (or before) its normal answer,
/// so tests can reproduce amodb's failures on demand.
public enum Behaviour: Sendable, Equatable {
    /// An amodb-style JSON error for this HTTP status (`401`, `402`, `404`, `429`, `500`,
    /// `502`, `503`, `504`, …), with amodb's `status_code` for it; `429` carries `Retry-After: 1`.
    case status(Int)
    /// `429` with `Retry-After` set to this many seconds and amodb's over-limit error body.
    case rateLimited(retryAfter: Int)
    /// Waits this long (instead of the configured latency), then answers normally.
    case delay(Duration)
    /// `200` with correct framing whose body is the first half of the normal answer:
    /// the bytes arrive whole, but they are not valid JSON.
    case truncatedJSON
    /// `200` announcing the full `Content-Length`; half the body is sent, then the
    /// connection is dropped (the client sees a transport error mid-body).
    case droppedConnection
    /// Exactly this status and JSON body.
    case body(status: Int, json: String)
    /// A redirect (`301`, `302`, `303`, `307`, `308`) with `Location` set to this URL:
    /// what a compromised or misconfigured host might send to lure the key elsewhere.
    case redirect(status: Int, location: String)
}
