import AmodbClient
import AmodbModels
import Foundation
import Testing

/// The app's path through a TLS terminator, as `Tests/HTTPS/run.sh` sets it up: Caddy
/// with its internal CA in front of the release binary, the CA trusted by the system
/// bundle libcurl reads. Without `AMODB_HTTPS_CHECK_URL` there is nothing to reach, so the
/// test is skipped and says why.
@Suite(.timeLimit(.minutes(1)))
struct HTTPSPathTests {
    /// The proxy's API root behind the terminator, e.g. `https://127.0.0.1:28443/3`.
    static let baseURL = ProcessInfo.processInfo.environment["AMODB_HTTPS_CHECK_URL"]
    /// A client token the proxy accepts, when it requires one.
    static let token = ProcessInfo.processInfo.environment["AMODB_HTTPS_CHECK_TOKEN"]

    @Test(
        .enabled(
            if: baseURL != nil, "AMODB_HTTPS_CHECK_URL is not set: Tests/HTTPS/run.sh sets it to Caddy's HTTPS URL"))
    func amodbClientFetchesThroughTheTLSTerminatorTrustingItsCA() async throws {
        let baseURL = try #require(URL(string: Self.baseURL ?? ""))
        try #require(baseURL.scheme == "https", "the check is about HTTPS, not \(baseURL.absoluteString)")
        let client = AmodbClient(baseURL: baseURL, bearerToken: Self.token, timeout: 30)

        // Either call throws (failing the test) if TLS, the terminator or the proxy fails.
        let page = try await client.trending(.movie, .week)
        #expect(page.page == 1)
        #expect(page.results.count == 20)
        let movie = try await client.movie(id: 550, appendToResponse: ["credits"])
        #expect(movie.id == 550)
        #expect(movie.credits?.cast.isEmpty == false)
    }
}
