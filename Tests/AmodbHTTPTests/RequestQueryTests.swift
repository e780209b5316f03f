import AmodbBytes
import Testing

@testable import AmodbHTTP

/// The query is a checked slice of the target, read item by item on its bytes.
struct RequestQueryTests {
    static func items(_ text: String) -> [String]? {
        RequestQuery(Substring(text))?.items.map { "\($0.name)=\($0.value)" }
    }

    @Test(
        "Items are split on & and =, decoded once",
        arguments: [
            ("language=de&page=2", ["language=de", "page=2"]),
            ("", []), ("&&", []), ("a", ["a="]), ("a=", ["a="]), ("=b", ["=b"]), ("a=b=c", ["a=b=c"]),
            ("x=%2F&y=a+b", ["x=/", "y=a b"]), ("caf%C3%A9=th%C3%A9", ["café=thé"]), ("a%26b=c%3Dd", ["a&b=c=d"]),
            ("append_to_response=credits%2Cvideos", ["append_to_response=credits,videos"]),
        ])
    func readsItems(text: String, expected: [String]) {
        #expect(Self.items(text) == expected)
    }

    @Test(
        "Malformed escapes, controls and broken UTF-8 are refused",
        arguments: [
            "a=%", "a=%4", "a=%G0", "a=%00", "a=%1F", "a=%7F", "a=%C3", "%C3=%A9", "a=%C3&b=%A9", "a=%FF", "a=\u{1}",
        ])
    func refusesWhatCannotBeRead(text: String) {
        #expect(RequestQuery(Substring(text)) == nil)
    }

    @Test func aQueryIsReadInPlaceAndDecodedOnlyWhereItMustBe() throws {
        let request = try HTTPRequest(method: "GET", target: "/3/movie/1?language=fr-FR&q=a%20b+c&flag")
        #expect(request.query.text == "language=fr-FR&q=a%20b+c&flag")
        #expect(request.queryValue("language") == "fr-FR")
        #expect(request.queryValue("q") == "a b c")
        #expect(request.queryValue("flag") == "")
        #expect(request.queryValue("missing") == nil)
        var seen: [String] = []
        request.query.forEachItem { name, value in
            seen.append(name.decodedString() + "|" + value.decodedString())
        }
        #expect(seen == ["language|fr-FR", "q|a b c", "flag|"])
        #expect(!request.query.isEmpty)
        #expect(try HTTPRequest(method: "GET", target: "/a?&").query.isEmpty)
    }

    @Test func aBodyThatThrowsStopsTheReading() {
        struct Stop: Error {}
        var calls = 0
        #expect(throws: Stop.self) {
            try RequestQuery(Substring("a=1&b=%32&c=3"))!.forEachItem { (_, value) throws(Stop) in
                calls += 1
                if !value.isEmpty, value[0] == UInt8(ascii: "2") { throw Stop() }
            }
        }
        #expect(calls == 2)
    }
}
