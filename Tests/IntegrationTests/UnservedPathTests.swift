import AmodbPlanner
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A path the proxy does not forward is answered 404 by the proxy itself, saying so and
/// naming the paths it serves, so that a developer whose TMDB library asks for search or TV
/// reads why; a movie amodb does not have keeps amodb's "not found". The access log tells
/// them apart, and `amodb-proxy plan` replays neither.
@Suite(.timeLimit(.minutes(1)))
struct UnservedPathTests {
    /// The body of a JSON error, decoded.
    static func error(_ response: RawHTTPResponse) throws -> (code: Int?, message: String) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(object["success"] as? Bool == false)
        return (object["status_code"] as? Int, try #require(object["status_message"] as? String))
    }

    @Test(
        "A path outside the forwarded routes is named as unserved",
        arguments: [
            ("/3/search/movie?query=x", "/3/search/movie"), ("/3/tv/1399", "/3/tv/1399"),
            ("/3/movie/popular", "/3/movie/popular"), ("/3/trending/movie/month", "/3/trending/movie/month"),
            ("/search/movie", "/search/movie"),
        ])
    func anUnservedPathSaysSoAndListsTheServedOnes(target: String, path: String) async throws {
        try await withServer(try SandboxedProxy()) { setup in
            let answer = try await setup.harness.get(target)
            #expect(answer.status == 404)
            #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(answer.header("Cache-Control") == "no-store")
            let (code, message) = try Self.error(answer)
            #expect(code == 404, "the proxy's own errors carry their HTTP status")
            #expect(message.contains("does not serve \(path)"), "\(message)")
            #expect(!message.contains("?"), "the query is not echoed: \(message)")
            for served in ["/3/trending/{all|movie|tv|person}/{day|week}", "/3/movie/{id}", "/3/configuration"] {
                #expect(message.contains(served), "\(message)")
            }
            #expect(setup.sandbox.totalRequestCount == 0, "never sent upstream")
        }
    }

    @Test func aMissingMovieKeepsAmodbsNotFound() async throws {
        try await withServer(try SandboxedProxy()) { setup in
            let missing = try await setup.harness.get("/3/movie/1")
            #expect(missing.status == 404)
            let (_, message) = try Self.error(missing)
            #expect(message == "The resource you requested could not be found.")
            #expect(setup.sandbox.totalRequestCount == 1, "asked of amodb")
        }
    }

    /// A path too long or with bytes a log line must not carry is named as the access log
    /// names it: cut, and percent-encoded, inside a well-formed JSON string.
    @Test func anUnservedPathIsEchoedSafely() async throws {
        try await withServer(try SandboxedProxy()) { setup in
            let long = "/3/" + String(repeating: "a", count: 600)
            let (_, message) = try Self.error(try await setup.harness.get(long))
            #expect(message.utf8.count < 600, "\(message.utf8.count) bytes")
            let quoted = try await setup.harness.get("/3/a%22b%20c")
            #expect(quoted.status == 404)
            #expect(try Self.error(quoted).message.contains("/3/a%22b%20c"))
        }
    }

    /// The access log marks the unserved path (route `unmatched`, with the path) apart from
    /// a movie amodb does not have (the movie route, with its key), and the plan command,
    /// which replays what reached the cache, skips it.
    @Test func theAccessLogTellsThemApartAndThePlanSkipsTheUnserved() async throws {
        try await withServer(try SandboxedProxy()) { setup in
            #expect(try await setup.harness.get("/3/search/movie?query=x").status == 404)
            #expect(try await setup.harness.get("/3/movie/1").status == 404)
            let lines = setup.accessLog.all
            let objects = try lines.map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(objects.count == 2)
            #expect(objects.first?["route"] as? String == "unmatched")
            #expect(objects.first?["path"] as? String == "/3/search/movie")
            #expect(objects.first?["key"] == nil)
            #expect(objects.last?["route"] as? String == "/3/movie/{movie_id}")
            #expect(objects.last?["key"] as? String == "/movie/1")

            var reader = AccessLogReader()
            reader.feed(Array(lines.joined(separator: "\n").utf8))
            let contents = reader.finish()
            #expect(contents.requests.count == 1, "only the movie reached the cache")
            #expect(contents.linesNotForwarded == 1)
            #expect(contents.linesUnreadable == 0)
        }
    }
}
