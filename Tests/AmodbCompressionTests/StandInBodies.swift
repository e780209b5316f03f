import AmodbHTTP
import AmodbSandbox

/// Bodies exactly as the stand-in for amodb serves them: the JSON the proxy stores
/// and compresses. Asked of the sandbox directly, without a socket.
enum StandInBodies {
    /// The trending page the issue measures: `/3/trending/movie/week`, 20 movies.
    static let trendingTarget = "/3/trending/movie/week"
    /// A movie with the sub-resources apps ask for.
    static let movieTarget = "/3/movie/550?append_to_response=credits,ratings"

    /// The body the stand-in answers `target` (`/3/...?query`) with.
    static func body(_ target: String) async -> [UInt8] {
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 1_000_000))
        let request = try! HTTPRequest(
            method: "GET", target: target,
            headers: HTTPHeaders([("Host", "api.amodb.dev"), ("Authorization", "Bearer sandbox-key")]))
        let response = await withCheckedContinuation { continuation in
            if let response = sandbox.respond(to: request, later: { { continuation.resume(returning: $0) } }) {
                continuation.resume(returning: response)
            }
        }
        precondition(response.status == 200, "the stand-in refused \(target): \(response.status)")
        return response.body
    }
}
