import AmodbHTTP
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

struct CORSPolicyTests {
    @Test(arguments: ["https://app.example.com", "https://evil.example"])
    func aPreflightOnAnAPIRouteVariesOnOriginOnce(_ origin: String) {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        var preflight = policy.preflight(origin: origin)
        policy.decorate(&preflight, origin: origin)  // as the responder finishes every API answer
        #expect(preflight.headers.values("Vary") == ["Origin"])
    }

    @Test func anAnswerThatAlreadyVariesKeepsItsVaryAndGainsOrigin() {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        var response = HTTPResponse(status: 200, headers: HTTPHeaders([("Vary", "Accept-Encoding")]))
        policy.decorate(&response, origin: "https://app.example.com")
        policy.decorate(&response, origin: "https://app.example.com")
        #expect(response.headers.values("Vary") == ["Accept-Encoding", "Origin"])
    }

    @Test func aWildcardDoesNotVary() {
        var response = CORSPolicy(origins: ["*"]).preflight(origin: "https://anyone.example")
        CORSPolicy(origins: ["*"]).decorate(&response, origin: "https://anyone.example")
        #expect(response.headers.values("Vary").isEmpty)
    }
}
