import AmodbClient
import AmodbModels
import Foundation
import Testing

@Suite("How the client handles amodb's statuses")
struct StatusHandlingTests {
    /// Calls `/movie/550` and returns the error it throws.
    static func movieError(_ stub: StubUpstream, client: AmodbClient? = nil) async -> AmodbClientError? {
        await #expect(throws: AmodbClientError.self) {
            _ = try await (client ?? stub.client()).movie(id: 550)
        }
    }

    @Test func a401SurfacesAtOnceWithAmodbsMessage() async throws {
        let stub = StubUpstream(.error(401, "Invalid API key: You must be granted a valid key."))
        let error = try #require(await Self.movieError(stub))

        #expect(error.kind == .unauthorized)
        #expect(error.status == 401)
        #expect(error.serverMessage == "Invalid API key: You must be granted a valid key.")
        #expect(error.message == "amodb rejected the API key (401): Invalid API key: You must be granted a valid key.")
        #expect(error.description == error.message)
        #expect(error.localizedDescription == error.message)
        #expect(!error.isTransient)
        #expect(stub.requests.count == 1)
        #expect(stub.requestedSleeps.isEmpty)
    }

    @Test func a401WithoutABodyStillReadsWell() async throws {
        let stub = StubUpstream(.http(status: 401))
        let error = try #require(await Self.movieError(stub))
        #expect(error.kind == .unauthorized)
        #expect(error.serverMessage == nil)
        #expect(error.message == "amodb rejected the API key (401).")
    }

    @Test func a402SurfacesAtOnceAsAnExpiredPlan() async throws {
        let stub = StubUpstream(.error(402, "Your plan has expired."))
        let error = try #require(await Self.movieError(stub))
        #expect(error.kind == .paymentRequired)
        #expect(error.status == 402)
        #expect(error.message == "The amodb plan has expired (402): Your plan has expired.")
        #expect(stub.requests.count == 1)
    }

    @Test func a404IsNotFound() async throws {
        let stub = StubUpstream(.error(404, "The resource you requested could not be found."))
        let error = try #require(await Self.movieError(stub))
        #expect(error.kind == .notFound)
        #expect(error.status == 404)
        #expect(error.message == "Not found (404): The resource you requested could not be found.")
        #expect(stub.requests.count == 1)
    }

    @Test(
        "Each status maps to one kind, surfaced after a single request",
        arguments: [
            (400, AmodbClientError.Kind.clientError), (403, .clientError), (405, .clientError), (422, .clientError),
            (500, .serverError), (502, .serverError), (503, .serverError), (504, .serverError),
        ])
    func statusKinds(status: Int, kind: AmodbClientError.Kind) async throws {
        let stub = StubUpstream(.error(status, "Something went wrong."))
        let error = try #require(await Self.movieError(stub))
        #expect(error.kind == kind)
        #expect(error.status == status)
        #expect(error.message.contains("(\(status))"))
        #expect(error.message.contains("Something went wrong."))
        #expect(stub.requests.count == 1)
    }

    @Test(
        "A 5xx shows its status and suggests trying again",
        arguments: [
            (
                StubUpstream.Reply.error(500, "Internal error: Something went wrong, contact amodb."),
                "amodb failed to answer (500): Internal error: Something went wrong, contact amodb. Try again later."
            ),
            (
                .http(status: 504, headers: ["Content-Type": "text/html"], body: "<html>Gateway Timeout</html>"),
                "amodb failed to answer (504). Try again later."
            ),
            (.http(status: 502, body: #"{"status_message": "  "}"#), "amodb failed to answer (502). Try again later."),
        ])
    func serverErrorsShowTheirStatus(reply: StubUpstream.Reply, message: String) async throws {
        let stub = StubUpstream(reply)
        let error = try #require(await Self.movieError(stub))
        #expect(error.kind == .serverError)
        #expect(error.isTransient)
        #expect(error.message == message)
    }

    @Test(
        "A 200 whose body is not the expected JSON is an invalid response",
        arguments: [
            ("not json", "amodb sent a response that could not be read (200): the body is not valid JSON."),
            ("", "amodb sent a response that could not be read (200): the body is not valid JSON."),
            (#"{"page": 1}"#, "amodb sent a response that could not be read (200): results is missing."),
            (
                #"{"page": 1, "results": [{"id": 1, "title": "x", "media_type": "movie"}, {"title": "y", "media_type": "movie"}]}"#,
                "amodb sent a response that could not be read (200): results[1].id is missing."
            ),
            (
                #"{"page": "1", "results": []}"#,
                "amodb sent a response that could not be read (200): page is not a Int."
            ),
            (
                #"{"page": 1, "results": [{"id": 1, "media_type": 7}]}"#,
                "amodb sent a response that could not be read (200): results[0].media_type is not a String."
            ),
        ])
    func undecodableBodies(body: String, message: String) async throws {
        let stub = StubUpstream(.json(body))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().trending(.all, .day)
        }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.status == 200)
        #expect(error?.message == message)
    }

    @Test func anErrorMessageThatEchoesTheTokenIsRedacted() async throws {
        let stub = StubUpstream(.error(401, "Invalid API key s3cret-key."))
        let error = try #require(await Self.movieError(stub, client: stub.client(bearerToken: "s3cret-key")))
        #expect(error.message == "amodb rejected the API key (401): Invalid API key <redacted>.")
    }

    @Test(
        "The bearer token never appears in an error",
        arguments: [
            StubUpstream.Reply.error(401, "Invalid API key s3cret-key"),
            .error(402, "Plan of s3cret-key expired"),
            .error(429, "s3cret-key is over the limit", headers: ["Retry-After": "1"]),
            .error(500, "upstream said s3cret-key"),
            .http(status: 404, body: "s3cret-key"),
            .json("s3cret-key"),
            .failure(.timedOut),
            .failure(.notConnectedToInternet),
            .failure(.secureConnectionFailed),
        ])
    func theTokenNeverLeaks(reply: StubUpstream.Reply) async throws {
        let stub = StubUpstream(reply)
        let error = try #require(await Self.movieError(stub, client: stub.client(bearerToken: "s3cret-key")))
        var dumped = ""
        dump(error, to: &dumped)
        for text in [
            error.message, error.description, String(reflecting: error), error.localizedDescription,
            error.serverMessage ?? "", dumped,
        ] {
            #expect(!text.contains("s3cret-key"), "leaked in \(text)")
        }
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer s3cret-key")
    }
}
