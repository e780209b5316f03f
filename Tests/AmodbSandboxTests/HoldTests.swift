import AmodbHTTP
import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Synchronization
import Testing

/// `hold()` / `release()`: tests act while a call is known to be at the stand-in.
@Suite struct HoldTests {
    @Test func aHeldAnswerWaitsUntilReleasedAndTheRequestIsCountedOnArrival() async throws {
        let sandbox = AmodbSandbox()
        sandbox.hold()
        let delivered = Mutex<[HTTPResponse]>([])
        let immediate = sandbox.respond(to: makeRequest("/3/movie/550")) {
            { response in delivered.withLock { $0.append(response) } }
        }
        #expect(immediate == nil, "held, not answered at once")
        #expect(sandbox.heldCount == 1)
        #expect(sandbox.requestCount(path: "/3/movie/550") == 1, "the test can see the request has arrived")
        #expect(delivered.withLock { $0.isEmpty })

        sandbox.release()
        #expect(sandbox.heldCount == 0)
        #expect(delivered.withLock { $0.map(\.status) } == [200])
        #expect(await get(sandbox, "/3/movie/550").status == 200, "answered at once again after release")
    }

    @Test func aReleasedAnswerStillKeepsItsScriptedDelay() async throws {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550", .delay(.milliseconds(1)), times: 1)
        sandbox.hold()
        async let answer = get(sandbox, "/3/movie/550")
        #expect(await eventually { sandbox.heldCount == 1 })
        sandbox.release()
        #expect(await answer.status == 200)
    }
}
