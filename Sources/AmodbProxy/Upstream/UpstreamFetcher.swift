package import AmodbModels
import Foundation

/// What amodb answered: status, the fields the proxy reads, the body.
package struct UpstreamResponse: Sendable {
    package var status: Int
    /// Header fields with lower-cased names (`retry-after`, `x-ratelimit-remaining`, …).
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `Retry-After` in seconds at `now` (seconds since 1970), read by the one parser the
    /// client uses too: delay-seconds or an HTTP-date, at most a day; `nil` if missing or unreadable.
    package func retryAfterSeconds(now: Double) -> Double? {
        RetryAfter.seconds(headers["retry-after"], now: Date(timeIntervalSince1970: now))
    }
}

/// Why no response came back from amodb.
package enum UpstreamError: Error, Sendable, Equatable {
    /// No answer within the upstream timeout.
    case timedOut
    /// Could not connect, or the connection broke.
    case unreachable
    /// The body grew past the proxy's cap (`AMODB_MAX_UPSTREAM_BYTES`, after decoding);
    /// the transfer was cancelled and the answer is unusable.
    case tooLarge
}

/// The one call the proxy makes to amodb. Behind a protocol so the cache logic can be
/// tested with a scripted upstream, and so later work (a budget governor, a shared
/// Redis cache) can wrap it.
package protocol UpstreamFetcher: Sendable {
    /// Sends `request` to amodb with the key and returns what came back.
    func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError>
}
