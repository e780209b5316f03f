import AmodbTestSupport
import Foundation
import Testing

/// `append_to_response` as TMDB client libraries send it, through the proxy to the stand-in:
/// names amodb does not know are dropped (never forwarded), an empty list is no list, and
/// every spelling of one list shares one entry.
@Suite(.timeLimit(.minutes(2)))
struct AppendToResponseTests {
    /// A JSON object's members, or an empty dictionary.
    private static func object(_ body: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    @Test func aLibrarysListWithUnknownNamesAnswersWithTheKnownSubResources() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let response = try await setup.harness.get("/3/movie/550?append_to_response=videos,trailers,images,credits")
            #expect(response.status == 200)
            let movie = Self.object(response.body)
            #expect(movie["id"] as? Int == 550)
            let images = try #require(movie["images"] as? [String: Any])
            #expect((images["posters"] as? [[String: Any]])?.first?["file_path"] is String)
            let videos = try #require(movie["videos"] as? [String: Any])
            #expect((videos["results"] as? [[String: Any]])?.first?["site"] as? String == "YouTube")
            let credits = try #require(movie["credits"] as? [String: Any])
            #expect((credits["cast"] as? [Any])?.isEmpty == false)
            #expect(movie["trailers"] == nil)
            // The stand-in saw the known names only, canonical: an unknown name never leaves the proxy.
            let seen = setup.sandbox.receivedRequests.map(\.target)
            #expect(seen == ["/3/movie/550?append_to_response=credits,images,videos"])
        }
    }

    @Test func aPythonLibrarysDefaultListIsAnsweredAndOnlyKnownNamesAreForwarded() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let response = try await setup.harness.get(
                "/3/movie/550?append_to_response=videos,trailers,images,casts,translations,keywords,release_dates")
            #expect(response.status == 200)
            let movie = Self.object(response.body)
            for name in ["videos", "images", "translations", "keywords", "release_dates"] {
                #expect(movie[name] is [String: Any], "\(name)")
            }
            #expect(
                setup.sandbox.receivedRequests.map { $0.queryValue("append_to_response") }
                    == ["images,keywords,release_dates,translations,videos"])
        }
    }

    @Test func anEmptyOrCommasOnlyListIsThePlainEntry() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let plain = try await setup.harness.get("/3/movie/550")
            #expect(plain.status == 200)
            for target in [
                "/3/movie/550?append_to_response=", "/3/movie/550?append_to_response=,,",
                "/3/movie/550?append_to_response=%20,%20,",
                "/3/movie/550?append_to_response=casts,trailers", "/3/movie/550?language=&append_to_response=",
            ] {
                let response = try await setup.harness.get(target)
                #expect(response.status == 200, "\(target)")
                #expect(response.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true, "\(target)")
                #expect(response.body == plain.body, "\(target)")
            }
            #expect(setup.sandbox.requestCount(path: "/3/movie/550") == 1)
            #expect(setup.sandbox.receivedRequests.map(\.target) == ["/3/movie/550"])
        }
    }

    @Test func anyOrderAndRepetitionOfOneListSharesOneEntry() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let first = try await setup.harness.get("/3/movie/680?append_to_response=images,credits")
            #expect(first.status == 200)
            for target in [
                "/3/movie/680?append_to_response=credits,images",
                "/3/movie/680?append_to_response=credits,images,credits,bogus",
                "/3/movie/680?append_to_response=%20images%20,credits,",
            ] {
                let response = try await setup.harness.get(target)
                #expect(response.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true, "\(target)")
                #expect(response.body == first.body, "\(target)")
            }
            #expect(setup.sandbox.receivedRequests.map(\.target) == ["/3/movie/680?append_to_response=credits,images"])
        }
    }

    @Test func everySubResourceAmodbDocumentsComesBackUnderItsName() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let names = [
                "alternative_titles", "changes", "credits", "external_ids", "images", "keywords", "lists", "ratings",
                "recommendations", "release_dates", "reviews", "similar", "translations", "videos", "watch/providers",
            ]
            let response = try await setup.harness.get("/3/movie/13?append_to_response=" + names.joined(separator: ","))
            #expect(response.status == 200)
            let movie = Self.object(response.body)
            for name in names {
                #expect(movie[name] is [String: Any], "\(name)")
            }
            let providers = try #require((movie["watch/providers"] as? [String: Any])?["results"] as? [String: Any])
            #expect(
                (providers["US"] as? [String: Any])?["link"] as? String
                    == "https://www.amodb.dev/movie/13/watch?locale=US")
            for paged in ["recommendations", "similar", "reviews", "lists"] {
                let page = movie[paged] as? [String: Any]
                #expect(page?["page"] as? Int == 1, "\(paged)")
                #expect(page?["results"] is [Any], "\(paged)")
                #expect(page?["total_results"] is Int, "\(paged)")
            }
        }
    }
}
