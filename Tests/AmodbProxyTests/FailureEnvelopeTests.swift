import Testing

@testable import AmodbProxy

/// How a fetch failed travels to the other replicas and comes back the same, and nothing
/// else is read as one.
struct FailureEnvelopeTests {
    @Test(arguments: [
        FetchFailure(status: 502, message: "amodb failed with status 500.", fwdStatus: 500),
        FetchFailure(status: 504, message: "amodb did not answer in time."),
        FetchFailure(
            status: 503, message: "amodb's rate limit is reached; try again in 7 s.", fwdStatus: 429, retryAfter: 6.5,
            backoff: 6.5),
        FetchFailure.noCall(.budgetExhausted, retryAfter: 12),
    ])
    func aFailureComesBackAsItWent(failure: FetchFailure) throws {
        let bytes = FailureEnvelope.encode(failure, key: "/movie/550?language=de-DE", finishedAt: 1_700_000_000_123)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("v1 1700000000123 "))
        let read = try #require(FailureEnvelope.decode(bytes, key: "/movie/550?language=de-DE"))
        #expect(read.status == failure.status)
        #expect(read.message == failure.message)
        #expect(read.fwdStatus == failure.fwdStatus)
        #expect(read.retryAfter == failure.retryAfter)
        #expect(read.detail == failure.detail)
        #expect(read.backoff == failure.backoff)
    }

    @Test(arguments: [
        ("another key", "v1 1 502 500 - 0 - 10 /movie/551amodb failed."),
        ("another version", "v2 1 502 500 - 0 - 10 /movie/550amodb failed."),
        ("a status the proxy never answers with", "v1 1 200 500 - 0 - 10 /movie/550amodb failed."),
        ("an unknown detail", "v1 1 503 - 1000 0 everything 10 /movie/550amodb failed."),
        ("a wait longer than a day", "v1 1 503 429 86400001 0 - 10 /movie/550amodb failed."),
        ("a message with a control byte", "v1 1 502 500 - 0 - 10 /movie/550amodb\u{1B}[31m failed."),
        ("no message", "v1 1 502 500 - 0 - 10 /movie/550"),
        ("cut short", "v1 1 502 500 - 0"),
    ])
    func anythingElseIsRefused(_ case: String, text: String) {
        #expect(FailureEnvelope.decode(Array(text.utf8), key: "/movie/550") == nil)
    }
}
