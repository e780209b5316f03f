import AmodbHTTP
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

struct CORSPolicyTests {
    /// The lines `decorate` rendered, as text.
    static func rendered(_ response: HTTPResponse) -> String {
        String(decoding: Array(response.renderedFields.shared) + response.renderedFields.bytes, as: UTF8.self)
    }

    @Test(arguments: ["https://app.example.com", "https://evil.example"])
    func aPreflightVariesOnOriginAndWhatItAsksOnce(_ origin: String) {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        let preflight = policy.preflight(origin: origin, requestedHeaders: "content-type")
        let expected =
            origin == "https://app.example.com"
            ? ["Origin, Access-Control-Request-Method, Access-Control-Request-Headers"] : ["Origin"]
        #expect(preflight.headers.values("Vary") == expected)
        #expect(preflight.renderedFields.isEmpty)
    }

    @Test func anAllowedOriginGetsItsOriginTheExposedFieldsAndVary() {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        var response = APIRefusal(.unservedPath, "x").response
        policy.decorate(&response, origin: "https://app.example.com")
        #expect(
            Self.rendered(response)
                == "Vary: Origin\r\nAccess-Control-Allow-Origin: https://app.example.com\r\n"
                + "Access-Control-Expose-Headers: Age, Cache-Status, ETag, Retry-After, WWW-Authenticate\r\n")
    }

    @Test func anotherOriginOrNoneGetsOnlyVary() {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        for origin in ["https://evil.example", nil] {
            var response = HTTPResponse(status: 200)
            policy.decorate(&response, origin: origin)
            #expect(Self.rendered(response) == "Vary: Origin\r\n", "\(origin ?? "none")")
        }
    }

    @Test func aWildcardDoesNotVary() {
        let policy = CORSPolicy(origins: ["*"])
        let preflight = policy.preflight(origin: "https://anyone.example", requestedHeaders: nil)
        #expect(preflight.headers.values("Vary") == ["Access-Control-Request-Method, Access-Control-Request-Headers"])
        #expect(preflight.headers.values("Access-Control-Allow-Headers").isEmpty, "none asked for")
        var response = HTTPResponse(status: 200)
        policy.decorate(&response, origin: nil)
        #expect(response.renderedFields.isEmpty, "nothing to say without an Origin")
        policy.decorate(&response, origin: "https://anyone.example")
        #expect(!Self.rendered(response).contains("Vary"))
        #expect(Self.rendered(response).contains("Access-Control-Allow-Origin: *\r\n"))
    }

    @Test func theServersOwnRefusalsCarryOnlyAWildcard() {
        var any = APIRefusal(.invalidParameter, "x").response
        CORSPolicy(origins: ["*"]).decorateRefusal(&any)
        #expect(Self.rendered(any).contains("Access-Control-Allow-Origin: *\r\n"))
        var listed = APIRefusal(.invalidParameter, "x").response
        CORSPolicy(origins: ["https://app.example.com"]).decorateRefusal(&listed)
        #expect(listed.renderedFields.isEmpty)
    }

    @Test(
        "Access-Control-Request-Headers is read as a list of field names",
        arguments: [
            ("content-type", "content-type"),
            (
                "authorization,cache-control,content-type,x-firebase-appcheck",
                "authorization, cache-control, content-type, x-firebase-appcheck"
            ),
            (" Content-Type ,\t,X-Custom_1.0~ ", "Content-Type, X-Custom_1.0~"),
            ("", ""), (" , ,", ""),
        ])
    func fieldNamesAreRead(_ list: String, _ expected: String) {
        #expect(CORSPolicy.fieldNames(list) == expected)
    }

    @Test(
        "A list with a name that is no token, or over its bounds, is refused",
        arguments: [
            "content type", "a:b", "x-a;b", "\"quoted\"", "x-\u{e9}", "a/b",
            Array(repeating: "x", count: 33).joined(separator: ","),
            String(repeating: "a", count: 1025),
        ])
    func malformedListsAreRefused(_ list: String) {
        #expect(CORSPolicy.fieldNames(list) == nil)
    }

    @Test func theBoundsThemselvesAreAllowed() {
        #expect(CORSPolicy.fieldNames(Array(repeating: "x", count: 32).joined(separator: ","))?.count == 32 * 3 - 2)
        #expect(CORSPolicy.fieldNames(String(repeating: "a", count: 1024)) != nil)
    }
}
