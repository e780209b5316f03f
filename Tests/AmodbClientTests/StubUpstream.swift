import AmodbClient
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A fake amodb reached through a real `URLSession`: a `URLProtocol` answers every request
/// sent to this stub's own host name (`<uuid>.stub`), so tests running in parallel never
/// share replies or request logs.
final class StubUpstream: Sendable {
    /// What the stub does for one request.
    enum Reply: Sendable {
        /// An HTTP response.
        case http(status: Int, headers: [String: String] = [:], body: String = "")
        /// A transport failure, as URLSession would report it.
        case failure(URLError.Code)

        /// A JSON response with amodb's error body.
        static func error(_ status: Int, _ message: String, headers: [String: String] = [:]) -> Reply {
            let body = #"{"success": false, "status_code": 7, "status_message": "\#(message)"}"#
            return .http(
                status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: body
            )
        }

        /// A 200 with a JSON body.
        static func json(_ body: String, headers: [String: String] = [:]) -> Reply {
            .http(status: 200, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: body)
        }
    }

    /// This stub's host name.
    let host = "\(UUID().uuidString.lowercased()).stub"
    private let replies: Locked<[Reply]>
    private let received = Locked<[URLRequest]>([])
    private let sleeps = Locked<[Duration]>([])

    /// A stub answering with `replies` in order; the last one repeats.
    init(_ replies: Reply...) {
        precondition(!replies.isEmpty)
        self.replies = Locked(replies)
        StubURLProtocol.register(self)
    }

    /// The requests that reached the stub, in order.
    var requests: [URLRequest] { received.current }

    /// The delays the client asked to sleep for, in order (nothing actually sleeps).
    var requestedSleeps: [Duration] { sleeps.current }

    /// A client for this stub, `prefix` being the base URL's path (`/3`, `/x/3`, …).
    func client(
        prefix: String = "/3", bearerToken: String? = "test-token", maxRateLimitRetries: Int = 2,
        retryAfterCap: TimeInterval = 30
    ) -> AmodbClient {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        let sleeps = self.sleeps
        return AmodbClient(
            baseURL: URL(string: "http://\(host)\(prefix)")!, bearerToken: bearerToken,
            session: URLSession(configuration: configuration), maxRateLimitRetries: maxRateLimitRetries,
            retryAfterCap: retryAfterCap, sleep: { duration in sleeps.withLock { $0.append(duration) } })
    }

    /// A client for this stub whose token comes from `tokenProvider`.
    func client(tokenProvider: @escaping TokenProvider) -> AmodbClient {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        let sleeps = self.sleeps
        return AmodbClient(
            baseURL: URL(string: "http://\(host)/3")!, tokenProvider: tokenProvider,
            session: URLSession(configuration: configuration),
            sleep: { duration in sleeps.withLock { $0.append(duration) } })
    }

    /// Records `request` and returns the reply for it.
    func answer(_ request: URLRequest) -> Reply {
        received.withLock { $0.append(request) }
        return replies.withLock { replies in replies.count > 1 ? replies.removeFirst() : replies[0] }
    }
}
