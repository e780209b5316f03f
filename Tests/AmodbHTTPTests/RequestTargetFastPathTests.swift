import Testing

@testable import AmodbHTTP

/// The paths and texts the hit path now checks in place (no escape to decode, nothing to
/// escape) must be judged exactly as the general path judges them.
struct RequestTargetFastPathTests {
    /// Every path of `/` and up to six more bytes over `/`, `.`, `a`, `\\` and a control byte:
    /// empty, `.` and `..` segments, backslashes and controls, alone and together.
    static let paths: [String] = {
        var paths = ["/"]
        var last = ["/"]
        for _ in 1...6 {
            last = last.flatMap { path in ["/", ".", "a", "\\", "\u{1}"].map { path + $0 } }
            paths += last
        }
        return paths
    }()

    /// The path `target` is read into, or `nil` if it is refused.
    private func judged(_ target: String) -> String? {
        try? RequestTarget.parse(target).path
    }

    /// `path` with the byte at `offset` written as `%XX`: the same path, read the decoding way.
    private func escaping(_ path: String, at offset: Int) -> String {
        var bytes = Array(path.utf8)
        let byte = bytes.remove(at: offset)
        let hex = Array("0123456789ABCDEF".utf8)
        bytes.insert(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], at: offset)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theInPlaceWayJudgesEveryShortPathAsTheDecodingWayDoes() {
        var mismatches: [String] = []
        var accepted = 0
        for path in Self.paths {
            let inPlace = judged(path)
            if inPlace != nil { accepted += 1 }
            // Absolute form, and a query after the path: the path is copied, not shared.
            for other in ["http://host" + path, path + "?q=1"] where judged(other) != inPlace {
                mismatches.append("\(path.debugDescription) and \(other.debugDescription)")
            }
            // Any byte but a separator escaped takes the path through percent-decoding.
            for offset in path.utf8.indices.map({ path.utf8.distance(from: path.utf8.startIndex, to: $0) })
            where Array(path.utf8)[offset] != UInt8(ascii: "/") {
                let escaped = escaping(path, at: offset)
                if judged(escaped) != inPlace {
                    mismatches.append("\(path.debugDescription) and \(escaped.debugDescription)")
                }
            }
        }
        #expect(mismatches.isEmpty, "judged differently: \(mismatches.prefix(10))")
        #expect(Self.paths.count == 19_531)
        // The paths of `/`, `.` and `a` without an empty, `.` or `..` segment; no other.
        #expect(accepted == 247)
    }

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
