import AmodbHTTP
import AmodbModels
import AmodbProxy
import AmodbSandbox
import Foundation
import Synchronization

/// A clock the tests move by hand, for the sandbox's sliding window.
final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)

    /// The current (frozen) instant.
    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    /// Moves time forward.
    func advance(by duration: Duration) {
        instant.withLock { $0 += duration }
    }
}

/// The key every test sandbox accepts unless a test says otherwise.
let testKey = "sandbox-key"

/// A GET (or other method) for a target such as `/3/movie/550?language=de-DE`,
/// presenting `key` as a bearer token unless it is `nil`.
func makeRequest(
    _ target: String, method: String = "GET", bearer key: String? = testKey, headers: [(String, String)] = []
) -> HTTPRequest {
    var fields = HTTPHeaders([("Host", "api.amodb.dev")])
    if let key { fields.add("Authorization", "Bearer \(key)") }
    for (name, value) in headers { fields.add(name, value) }
    if let request = try? HTTPRequest(method: method, target: target, headers: fields) { return request }
    // A target the server would refuse (the stand-in must still answer it sensibly): its path as given.
    let path = String(target.prefix { $0 != "?" })
    return HTTPRequest(method: method, target: target, path: path, headers: fields)
}

/// The sandbox's answer, whether it comes at once or later through `deliver`.
func send(_ sandbox: AmodbSandbox, _ request: HTTPRequest) async -> HTTPResponse {
    await withCheckedContinuation { continuation in
        if let response = sandbox.respond(to: request, later: { { continuation.resume(returning: $0) } }) {
            continuation.resume(returning: response)
        }
    }
}

/// `send(sandbox, makeRequest(target))`.
func get(_ sandbox: AmodbSandbox, _ target: String, bearer key: String? = testKey) async -> HTTPResponse {
    await send(sandbox, makeRequest(target, bearer: key))
}

/// Decodes a response body as the client would.
func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
    try JSONDecoder().decode(type, from: Data(response.body))
}

extension HTTPResponse {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// Every header name and value joined, for "never appears" checks.
    var headerText: String { headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

/// A sandbox whose rate limit never gets in the way.
func unlimitedSandbox() -> AmodbSandbox {
    AmodbSandbox(configuration: .init(requestsPerMinute: 1_000_000))
}

/// `movie:550`, `tv:1396`, `person:287`: ids are unique only within a media type.
func itemKey(_ item: TrendingItem) -> String {
    switch item {
    case .movie(let movie): "movie:\(movie.id)"
    case .tv(let show): "tv:\(show.id)"
    case .person(let person): "person:\(person.id)"
    }
}
