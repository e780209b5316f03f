import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// Calls to amodb that have come back (or timed out), as `/metrics` counts them.
private func completedUpstreamCalls(_ setup: SandboxedProxy) -> Double? {
    try? PrometheusSamples(setup.harness.proxy.metrics.render()).samples
        .first { $0.name == "amodb_proxy_upstream_request_duration_seconds_count" }?.value
}

/// Paths whose failed refresh is remembered, as `/metrics` reports them.
private func backoffEntries(_ setup: SandboxedProxy) -> Double? {
    try? PrometheusSamples(setup.harness.proxy.metrics.render()).samples
        .first { $0.name == "amodb_proxy_forwarder_table_entries" && $0.labels["table"] == "backoff" }?.value
}

/// Cache semantics against the stand-in amodb, with the proxy's clock moved by hand.
@Suite(.timeLimit(.minutes(1)))
struct CacheSemanticsIntegrationTests {
    @Test func aStaleEntryIsServedAtOnceAndRefreshedInTheBackground() async throws {
        let clock = ManualClock()
        let setup = try SandboxedProxy(clock: clock)
        try await withServer(setup) { _ in
            let first = try await setup.client().trending(.movie, .day)
            clock.advance(by: 1800)
            setup.sandbox.script("/3/trending/movie/day", .delay(.seconds(3)), times: 1)  // a slow refresh
            let stale = try await setup.harness.get("/3/trending/movie/day")
            // The stale answer is in while amodb has answered only the first call: nobody waited.
            #expect(completedUpstreamCalls(setup) == 1, "nobody waits for the refresh")
            #expect(stale.status == 200)
            #expect(stale.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=0")
            #expect(try await setup.client().trending(.movie, .day) == first)
            #expect(await eventually(within: 30) { setup.harness.proxy.statistics.value(.upstreamCall) == 2 })
            #expect(
                await eventually(within: 30) {
                    setup.harness.proxy.cache.entry(for: "/trending/movie/day")?.isFresh(at: clock.now()) == true
                })
            #expect(setup.sandbox.requestCount(path: "/3/trending/movie/day") == 2)
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        let behaviour: Behaviour
        let fwdStatus: String
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "500", behaviour: .status(500), fwdStatus: "; fwd-status=500"),
        Failure(name: "502", behaviour: .status(502), fwdStatus: "; fwd-status=502"),
        Failure(name: "401", behaviour: .status(401), fwdStatus: "; fwd-status=401"),
        Failure(name: "402", behaviour: .status(402), fwdStatus: "; fwd-status=402"),
        Failure(name: "429 past the retry cap", behaviour: .rateLimited(retryAfter: 60), fwdStatus: "; fwd-status=429"),
        Failure(name: "timeout", behaviour: .delay(.seconds(3)), fwdStatus: ""),
        Failure(name: "truncated JSON", behaviour: .truncatedJSON, fwdStatus: "; fwd-status=200"),
        Failure(name: "dropped connection", behaviour: .droppedConnection, fwdStatus: ""),
    ]

    @Test(arguments: failures)
    func keepsAnsweringFromTheStaleCopyWhenAmodbFails(_ failure: Failure) async throws {
        let clock = ManualClock()
        let setup = try SandboxedProxy(clock: clock) { $0.upstreamTimeout = 1 }
        try await withServer(setup) { _ in
            let fresh = try await setup.harness.get("/3/movie/550?append_to_response=credits")
            #expect(fresh.status == 200)
            setup.sandbox.script("/3/movie/550", failure.behaviour)
            clock.advance(by: 3600)
            // starts the refresh
            #expect(try await setup.harness.get("/3/movie/550?append_to_response=credits").status == 200)
            // The refresh has failed once the second call to amodb has come back (or timed out).
            #expect(await eventually(within: 30) { completedUpstreamCalls(setup) == 2 })
            // …and has ended once its back-off is remembered.
            #expect(await eventually { backoffEntries(setup) == 1 })

            let stale = try await setup.harness.get("/3/movie/550?append_to_response=credits")
            #expect(stale.status == 200)
            #expect(stale.body == fresh.body)
            #expect(
                stale.header("Cache-Status")
                    == "amodb-proxy; fwd=stale\(failure.fwdStatus); ttl=-1800; detail=stale-if-error")
            #expect(setup.harness.proxy.statistics.value(.staleIfError) == 1)
            #expect(!stale.text.contains(ProxyHarness.key))
        }
    }

    @Test func aMissingMovieCostsOneCallPerNegativeLifetime() async throws {
        let clock = ManualClock()
        let setup = try SandboxedProxy(clock: clock)
        try await withServer(setup) { _ async throws in
            for _ in 0..<5 { #expect(try await setup.harness.get("/3/movie/987654").status == 404) }
            #expect(setup.sandbox.requestCount(path: "/3/movie/987654") == 1)
            clock.advance(by: 301)
            #expect(try await setup.harness.get("/3/movie/987654").status == 404)
            #expect(setup.sandbox.requestCount(path: "/3/movie/987654") == 2)
        }
    }
}
