import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Testing

/// After a failed refresh the stale copy is served without new calls for the back-off
/// (10 s); once it has passed, exactly one refresh follows however many clients ask.
@Suite(.timeLimit(.minutes(1)))
struct RefreshBackoffTests {
    @Test func theBackoffAfterAFailedRefreshExpiresAndThenExactlyOneRetryFollows() async throws {
        let clock = ManualClock()
        let setup = try SandboxedProxy(clock: clock)
        try await withServer(setup) { setup in
            let path = "/3/movie/550"
            #expect(try await setup.harness.get(path).status == 200)
            setup.sandbox.script(path, .status(500), times: 1)
            clock.advance(by: 1801)

            // Stale: answered at once, and one refresh goes out (and fails).
            #expect(try await setup.harness.get(path).header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
            // Once the failure is recorded, answers say stale-if-error; polling spends no call,
            // since the refresh in flight or its recorded failure stops a new one.
            #expect(
                try await eventually {
                    try await setup.harness.get(path).header("Cache-Status")?.hasSuffix("detail=stale-if-error") == true
                })
            #expect(setup.sandbox.requestCount(path: path) == 2)

            // Within the back-off: still no call.
            clock.advance(by: 9)
            for _ in 0..<3 {
                let response = try await setup.harness.get(path)
                #expect(response.status == 200)
                #expect(
                    response.header("Cache-Status")
                        == "amodb-proxy; fwd=stale; fwd-status=500; ttl=-10; detail=stale-if-error")
            }
            #expect(setup.sandbox.requestCount(path: path) == 2)

            // Past it: the next answers are stale-while-revalidate, and exactly one retry goes out.
            clock.advance(by: 2)
            setup.sandbox.hold()
            for _ in 0..<5 {
                #expect(try await setup.harness.get(path).header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-12")
            }
            #expect(await eventually { setup.sandbox.heldCount == 1 })
            #expect(setup.sandbox.requestCount(path: path) == 3)
            setup.sandbox.release()
            #expect(
                try await eventually {
                    try await setup.harness.get(path).header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true
                })
            #expect(setup.sandbox.requestCount(path: path) == 3)
        }
    }
}
