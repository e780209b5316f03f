import AmodbTestSupport
import Foundation
import Testing

/// The built binary as `amodb-proxy --sandbox` runs it, asked what TMDB client libraries
/// ask first: the configuration, and a movie with their default `append_to_response`.
@Suite(.timeLimit(.minutes(1)))
struct SandboxModeTests {
    /// `GET target` on the proxy at `port`, on a connection of its own, with `fields`.
    private func get(_ target: String, port: Int, fields: String = "") async throws -> RawHTTPResponse? {
        try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: 10)
            defer { connection.close() }
            try connection.send("GET \(target) HTTP/1.1\r\nHost: a\r\n\(fields)\r\n")
            return try connection.readResponse()
        }
    }

    /// With app tokens required, the hint's plain `curl` would get 401: it sends the token
    /// as the bearer, says where to take it from, and does not print it.
    @Test func theHintShowsTheHeaderTheTokensRequire() async throws {
        let token = "app-token-5c0f9e2b7d41a8"
        let process = try ProxyBinary().launch(
            ["--sandbox"],
            environment: [
                "HOST": "127.0.0.1", "PORT": "0", "AMODB_ACCESS_LOG": "off", "AMODB_PROXY_TOKENS": token,
            ],
            standardError: .pipe)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let hint = { (process.standardError?.lines ?? []).first { $0.hasPrefix("Try: ") } }
        #expect(await eventually(within: 20) { hint() != nil })
        let line = try #require(hint())
        #expect(!line.contains(token), "the hint never holds a token")
        let curl = try #require(line.split(separator: "; ", maxSplits: 1).last.map(String.init))
        #expect(line.hasPrefix("Try: TOKEN=<an app token from AMODB_PROXY_TOKENS>; "), "\(line)")
        #expect(curl.hasPrefix(#"curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:"#), "\(line)")
        let port = try #require(curl.split(separator: ":").last?.split(separator: "/").first.flatMap { Int($0) })
        // The request the hint shows, $TOKEN set as it says, is served; without the header it is not.
        let target = "/3/trending/movie/week"
        #expect(curl.hasSuffix(target))
        #expect(try await get(target, port: port, fields: "Authorization: Bearer \(token)\r\n")?.status == 200)
        #expect(try await get(target, port: port)?.status == 401)
    }

    @Test func theSandboxAnswersALibrarysFirstCalls() async throws {
        let process = try ProxyBinary().launch(
            ["--sandbox"], environment: ["HOST": "127.0.0.1", "PORT": "0", "AMODB_ACCESS_LOG": "off"],
            standardError: .pipe)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        // The port, from the "amodb-proxy listening" line once it is written.
        let port = { () -> Int? in
            (process.standardError?.lines ?? []).lazy
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
                .first { $0["message"] == "amodb-proxy listening" }?["address"]
                .flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
        }
        #expect(await eventually(within: 20) { port() != nil })
        let bound = try #require(port())

        let movie = try #require(
            try await get("/3/movie/550?append_to_response=videos,trailers,images,credits", port: bound))
        #expect(movie.status == 200)
        let details = try #require(try JSONSerialization.jsonObject(with: Data(movie.body)) as? [String: Any])
        #expect(details["images"] is [String: Any])
        #expect(details["videos"] is [String: Any])
        #expect(details["credits"] is [String: Any])

        let empty = try #require(try await get("/3/movie/550?append_to_response=", port: bound))
        #expect(empty.status == 200)
        #expect(empty.header("Cache-Status")?.hasPrefix("amodb-proxy; fwd=miss") == true, "the plain entry, filled now")

        let configuration = try #require(try await get("/3/configuration", port: bound))
        #expect(configuration.status == 200)
        let images =
            try #require(try JSONSerialization.jsonObject(with: Data(configuration.body)) as? [String: Any])["images"]
            as? [String: Any]
        #expect(images?["secure_base_url"] as? String == "https://img.amodb.dev/t/p/")
    }
}
