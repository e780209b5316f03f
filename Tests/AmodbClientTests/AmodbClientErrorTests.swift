import Foundation
import Testing

@testable import AmodbClient

@Suite("AmodbClientError")
struct AmodbClientErrorTests {
    @Test(
        "Statuses map to kinds in one place",
        arguments: [
            (401, AmodbClientError.Kind.unauthorized), (402, .paymentRequired), (404, .notFound),
            (429, .rateLimited), (400, .clientError), (499, .clientError), (500, .serverError),
            (599, .serverError), (304, .unexpectedStatus), (100, .unexpectedStatus),
        ])
    func statusKinds(status: Int, kind: AmodbClientError.Kind) {
        let error = AmodbClientError(.status(status, serverMessage: nil, retryAfter: nil))
        #expect(error.kind == kind)
        #expect(error.status == status)
        #expect(error.message.contains("(\(status))"))
    }

    @Test(
        "Only failures a later call may fix are transient",
        arguments: [
            (AmodbClientError.Reason.status(429, serverMessage: nil, retryAfter: nil), true),
            (.status(503, serverMessage: nil, retryAfter: nil), true),
            (.transport(.timedOut, host: nil, timeout: 10), true),
            (.transport(.notConnectedToInternet, host: nil, timeout: 10), true),
            (.status(401, serverMessage: nil, retryAfter: nil), false),
            (.status(402, serverMessage: nil, retryAfter: nil), false),
            (.status(404, serverMessage: nil, retryAfter: nil), false),
            (.invalidRequest("x"), false),
            (.invalidResponse(status: 200, detail: "x"), false),
            (.cancelled, false),
            (.attestationRefused(.session, status: 503, serverMessage: nil, retryAfter: nil), true),
            (.attestationRefused(.challenge, status: 429, serverMessage: nil, retryAfter: nil), true),
            (.attestationRefused(.session, status: 401, serverMessage: nil, retryAfter: nil), false),
            (.attestationRefused(.challenge, status: 404, serverMessage: nil, retryAfter: nil), false),
            (.attestationUnavailable("x"), false),
            (.attestationUnreadable(.session, status: 200, detail: "x"), false),
        ])
    func transience(reason: AmodbClientError.Reason, transient: Bool) {
        #expect(AmodbClientError(reason).isTransient == transient)
    }

    @Test(
        "App Attest failures are their own kind, unless the proxy is busy or failing",
        arguments: [
            (AmodbClientError.Reason.attestationUnavailable("x"), AmodbClientError.Kind.attestationFailed),
            (.attestationRefused(.attestation, status: 401, serverMessage: nil, retryAfter: nil), .attestationFailed),
            (.attestationRefused(.attestation, status: 400, serverMessage: nil, retryAfter: nil), .attestationFailed),
            (.attestationRefused(.challenge, status: 404, serverMessage: nil, retryAfter: nil), .attestationFailed),
            (.attestationRefused(.session, status: 429, serverMessage: nil, retryAfter: nil), .rateLimited),
            (.attestationRefused(.session, status: 502, serverMessage: nil, retryAfter: nil), .serverError),
            (.attestationUnreadable(.session, status: 200, detail: "x"), .invalidResponse),
        ])
    func attestationKinds(reason: AmodbClientError.Reason, kind: AmodbClientError.Kind) {
        #expect(AmodbClientError(reason).kind == kind)
        #expect(AmodbClientError(reason).kind.description == kind.description)
    }

    @Test func kindsCanBeMatchedInASwitch() {
        let error = AmodbClientError(.status(402, serverMessage: nil, retryAfter: nil))
        let text =
            switch error.kind {
            case .unauthorized: "key"
            case .paymentRequired: "plan"
            default: "other"
            }
        #expect(text == "plan")
        #expect(error.kind.description == "paymentRequired")
    }

    @Test func errorsCompareByWhatHappened() {
        let a = AmodbClientError(.status(500, serverMessage: "x", retryAfter: nil))
        #expect(a == AmodbClientError(.status(500, serverMessage: "x", retryAfter: nil)))
        #expect(a != AmodbClientError(.status(500, serverMessage: "y", retryAfter: nil)))
        #expect(a != AmodbClientError(.status(502, serverMessage: "x", retryAfter: nil)))
    }
}
