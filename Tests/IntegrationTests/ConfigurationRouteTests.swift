import AmodbClient
import AmodbModels
import AmodbTestSupport
import Foundation
import Testing

/// `/3/configuration`, which apps and TMDB libraries ask for first: forwarded without any
/// of the client's parameters, cached for a day, decoded by `AmodbClient`.
@Suite(.timeLimit(.minutes(2)))
struct ConfigurationRouteTests {
    @Test func theClientGetsTheImageConfigurationAndTheSecondCallIsAHit() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let client = setup.client()
            let configuration = try await client.configuration()
            #expect(configuration.images.secureBaseURL == "https://img.amodb.dev/t/p/")
            #expect(configuration.images.baseURL == "http://img.amodb.dev/t/p/")
            #expect(configuration.images.posterSizes == ["w92", "w154", "w185", "w342", "w500", "w780", "original"])
            #expect(configuration.images.profileSizes.contains("h632"))
            #expect(configuration.changeKeys.contains("title"))
            #expect(try await client.configuration() == configuration)
            let third = try await client.response(for: AmodbRequest(route: .configuration))
            #expect(third.headers["Cache-Status"]?.hasPrefix("amodb-proxy; hit") == true)
            // Fresh for a day by default: the answer says so to the apps' own caches.
            let maxAge = third.headers["Cache-Control"]?.split(separator: "=").last.flatMap { Int($0) }
            #expect((86_000...86_400).contains(maxAge ?? 0), "a day, less the seconds the test took")
            #expect(setup.sandbox.requestCount(path: "/3/configuration") == 1)
        }
    }

    @Test func theClientsParametersAreNeverForwarded() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let response = try await setup.client().sendRaw(
                pathAndQuery: "/configuration?api_key=x&foo=1&language=de-DE")
            #expect(response.status == 200)
            let plain = try await setup.harness.get("/3/configuration")
            #expect(
                plain.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true, "one entry, whatever the query")
            let seen = setup.sandbox.receivedRequests
            #expect(seen.map(\.target) == ["/3/configuration"])
            #expect(seen.first?.headers["Authorization"] == "Bearer \(ProxyHarness.key)")
        }
    }

    @Test func anAnswerWithoutImagesIsRefusedAndNotStored() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            setup.sandbox.script("/3/configuration", .body(status: 200, json: #"{"change_keys":["title"]}"#), times: 1)
            #expect(try await setup.harness.get("/3/configuration").status == 502)
            #expect(try await setup.harness.get("/3/configuration").status == 200)
            #expect(setup.sandbox.requestCount(path: "/3/configuration") == 2)
        }
    }

    @Test func itIsCountedAndLoggedUnderItsOwnRoute() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            #expect(try await setup.harness.get("/3/configuration").status == 200)
            let metrics = try await setup.harness.metrics()
            #expect(
                try metrics.value(
                    "amodb_proxy_requests_total", ["route": "/3/configuration", "status": "200", "cache": "miss"]) == 1)
            #expect(await eventually { setup.accessLog.all.contains { $0.contains(#""route":"/3/configuration""#) } })
        }
    }

    @Test func answersWebAppsWithCORS() async throws {
        let setup = try SandboxedProxy { $0.corsOrigins = ["https://app.example.com"] }
        try await withServer(setup) { (setup: SandboxedProxy) async throws in
            let response = try await setup.harness.get(
                "/3/configuration", headers: ["Origin": "https://app.example.com"])
            #expect(response.status == 200)
            #expect(response.header("Access-Control-Allow-Origin") == "https://app.example.com")
        }
    }
}
