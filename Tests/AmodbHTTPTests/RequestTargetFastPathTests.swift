@testable import AmodbHTTP
import Testing

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
}
