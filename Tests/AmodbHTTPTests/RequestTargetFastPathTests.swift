import Testing

@testable import AmodbHTTP

/// The paths and texts the hit path now checks in place (no escape to decode, nothing to
/// escape) must be judged exactly as the general path judges them.
struct RequestTargetFastPathTests {
    @Test(arguments: [
        ("/", "/"), ("/3/movie/550", "/3/movie/550"), ("/a/.../b", "/a/.../b"), ("/a/.b/c..", "/a/.b/c.."),
        ("/a%2Eb", "/a.b"), ("/%41/b", "/A/b"),
    ])
    func acceptsPathsWithOrWithoutEscapes(target: String, path: String) throws {
        #expect(try RequestTarget.parse(target).path == path)
    }

    @Test(arguments: [
        "/a/./b", "/a/../b", "/a//b", "/a/", "/.", "/..", "/a/.", "/a/..", "//",
        "/a/%2E/b", "/a/%2E%2E/b", "/a/%2F", "/a\\b",
    ])
    func refusesDotEmptyAndEncodedSeparatorSegments(target: String) {
        #expect(throws: HTTPParseError.self) { try RequestTarget.parse(target) }
    }

    @Test(
        "Targets are split into path and query on their bytes",
        arguments: [
            ("/3/movie/550?language=de&page=2", "/3/movie/550", ["language=de", "page=2"]),
            ("/a?", "/a", []), ("/a?b", "/a", ["b="]), ("/a?x=%2F&y=a+b", "/a", ["x=/", "y=a b"]),
            ("/a?b?c=d", "/a", ["b?c=d"]), ("HTTP://host/3/movie/1?x=1", "/3/movie/1", ["x=1"]),
            ("https://host", "/", []), ("http://host:8080/a", "/a", []), ("/caf%C3%A9", "/café", []),
        ])
    func splitsPathAndQuery(target: String, path: String, query: [String]) throws {
        let parsed = try RequestTarget.parse(target)
        #expect(parsed.path == path)
        #expect(parsed.query.items.map { "\($0.name)=\($0.value)" } == query)
    }

    @Test(
        "Targets that are not an origin or absolute form are refused",
        arguments: [
            "*", "", "a/b", "?a", "/a#b", "/a?b#c", "http://host?x", "ftp://host/a", "/a\u{7F}", "/a\u{0}b",
            "/a b\u{1}",
            "http://host/a/../b",
        ])
    func refusesOtherForms(target: String) {
        #expect(throws: HTTPParseError.self) { try RequestTarget.parse(target) }
    }
}
