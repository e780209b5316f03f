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
        // The same fields with an origin or none: a shared cache in front may store either.
        for origin in [nil, "https://anyone.example", "null"] {
            var response = HTTPResponse(status: 200)
            policy.decorate(&response, origin: origin)
            #expect(
                Self.rendered(response)
                    == "Access-Control-Allow-Origin: *\r\n"
                    + "Access-Control-Expose-Headers: Age, Cache-Status, ETag, Retry-After, WWW-Authenticate\r\n",
                "\(origin ?? "no Origin")")
        }
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

    @Test func aRefusedOriginIsNamedWithTheSettingAndLoggedOnce() throws {
        let logs = LogCapture()
        let policy = CORSPolicy(
            origins: ["http://localhost:8000"], logger: ProxyLogger(minimumLevel: .debug, sink: logs.sink))
        let preflight = policy.preflight(origin: "http://127.0.0.1:8000", requestedHeaders: "authorization")
        #expect(preflight.status == 403)
        let body = String(decoding: preflight.body, as: UTF8.self)
        #expect(body.contains("The origin http://127.0.0.1:8000 may not call the proxy"))
        #expect(body.contains("AMODB_CORS_ORIGINS"))
        for _ in 0..<3 {
            var response = HTTPResponse(status: 200)
            policy.decorate(&response, origin: "http://127.0.0.1:8000")
        }
        var other = HTTPResponse(status: 200)
        policy.decorate(&other, origin: "https://elsewhere.example")
        let refusedLines = logs.all.filter { $0.contains("refused a web page's origin") }
        #expect(refusedLines.count == 2, "once per origin: \(refusedLines)")
        #expect(refusedLines.first?.contains("http://127.0.0.1:8000") == true)
        #expect(refusedLines.last?.contains("https://elsewhere.example") == true)
    }

    @Test func refusedOriginsAreRememberedWithinABoundAndShownSafely() {
        let logs = LogCapture()
        let policy = CORSPolicy(origins: ["https://app.example"], logger: ProxyLogger(sink: logs.sink))
        for index in 0..<(RefusedOrigins.capacity + 50) {
            var response = HTTPResponse(status: 200)
            policy.decorate(&response, origin: "https://site-\(index).example")
        }
        // The logger's own repeat limit condenses a flood of them further.
        let logged = logs.all.filter { $0.contains("refused a web page's origin") }.count
        #expect((1...RefusedOrigins.capacity).contains(logged))
        #expect(logs.all.filter { $0.contains("the others are not logged") }.count == 1)
        let long = "https://" + String(repeating: "a", count: 5_000) + "\u{7}.example"
        #expect(RefusedOrigins.shown(long).utf8.count == RefusedOrigins.shownBytes)
        #expect(RefusedOrigins.shown("https://a\u{7}b") == "https://a?b")
    }
}
