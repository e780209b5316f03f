import AmodbClient
import AmodbModels
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Telling transport failures apart")
struct TransportErrorTests {
    @Test(
        "URLSession's errors are classified",
        arguments: [
            (URLError.Code.timedOut, AmodbClientError.Kind.timedOut),
            (.notConnectedToInternet, .offline), (.cannotConnectToHost, .offline), (.cannotFindHost, .offline),
            (.networkConnectionLost, .offline), (.dnsLookupFailed, .offline),
            (.secureConnectionFailed, .transport), (.badServerResponse, .transport), (.cancelled, .cancelled),
        ])
    func transportErrorsAreClassified(code: URLError.Code, kind: AmodbClientError.Kind) async throws {
        let stub = StubUpstream(.failure(code))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().movie(id: 550)
        }
        #expect(error?.kind == kind)
        #expect(error?.status == nil)
        #expect(error?.urlErrorCode == (kind == .cancelled ? nil : code))
        #expect(stub.requests.count == 1)
    }

    @Test(
        "Each failure has its own message",
        arguments: [
            (URLError.Code.timedOut, "The server HOST did not answer within 10 s."),
            (.notConnectedToInternet, "You appear to be offline."),
            (.cannotFindHost, "Cannot find the server HOST. Check your connection."),
            (.cannotConnectToHost, "Cannot connect to the server HOST."),
            (.networkConnectionLost, "The network connection was lost."),
            (.secureConnectionFailed, "A secure connection to the server HOST could not be made."),
            (.badServerResponse, "The request to the server HOST failed (URL error -1011)."),
        ])
    func transportMessages(code: URLError.Code, message: String) async throws {
        let stub = StubUpstream(.failure(code))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().movie(id: 550)
        }
        #expect(error?.message == message.replacingOccurrences(of: "HOST", with: stub.host))
    }

    @Test func transportFailuresAreNotRetried() async throws {
        let stub = StubUpstream(.failure(.timedOut), .json(Fixtures.trendingPage))
        _ = await #expect(throws: AmodbClientError.self) { _ = try await stub.client().trending(.all, .day) }
        #expect(stub.requests.count == 1)
        #expect(stub.requestedSleeps.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func aServerThatNeverAnswersTimesOut() async throws {
        let socket = try LocalSocket(listening: true)
        let client = AmodbClient(baseURL: URL(string: "http://127.0.0.1:\(socket.port)/3")!, timeout: 0.5)
        // The server never answers: only the client's timeout ends the call (its kind says so).
        let error = await #expect(throws: AmodbClientError.self) { _ = try await client.movie(id: 550) }
        withExtendedLifetime(socket) {}
        #expect(error?.kind == .timedOut)
        #expect(error?.isTransient == true)
        #expect(error?.message == "The server 127.0.0.1 did not answer within 1 s.")
    }

    @Test(.timeLimit(.minutes(1)))
    func aRefusedConnectionIsOfflineNotTimedOut() async throws {
        let socket = try LocalSocket(listening: false)
        let client = AmodbClient(baseURL: URL(string: "http://127.0.0.1:\(socket.port)/3")!, timeout: 5)
        let error = await #expect(throws: AmodbClientError.self) { _ = try await client.movie(id: 550) }
        withExtendedLifetime(socket) {}
        #expect(error?.kind == .offline)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
        #expect(error?.message == "Cannot connect to the server 127.0.0.1.")
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheCallingTaskSurfacesAsCancelled() async throws {
        // The stand-in holds its answer, so the cancel lands while the request is known to
        // be in flight (it has reached the server), not before it went out.
        let sandbox = AmodbSandbox(configuration: .init(apiKey: "k"))
        _ = try sandbox.start()
        try await withServer(sandbox) { sandbox in
            sandbox.hold()
            let client = AmodbClient(baseURL: URL(string: sandbox.baseURL)!, bearerToken: "k", timeout: 30)
            let task = Task { () async throws -> MovieDetails in try await client.movie(id: 550) }
            #expect(await eventually { sandbox.heldCount == 1 }, "the request reached the stand-in")
            task.cancel()
            let result = await task.result
            sandbox.release()
            guard case .failure(let error) = result else {
                Issue.record("the call succeeded")
                return
            }
            #expect((error as? AmodbClientError)?.kind == .cancelled)
        }
    }

    @Test func aTaskCancelledBeforeTheCallSendsNothing() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        let client = stub.client()
        let task = Task { () async throws -> TrendingPage in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.trending(.all, .day)
        }
        guard case .failure(let error) = await task.result else {
            Issue.record("the call succeeded")
            return
        }
        #expect((error as? AmodbClientError)?.kind == .cancelled)
        #expect(stub.requests.isEmpty)
    }
}
