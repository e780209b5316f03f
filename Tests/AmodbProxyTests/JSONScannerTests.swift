import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite struct JSONScannerTests {
    @Test func readsTheWatchedTopLevelMembersOnly() throws {
        let body = #"{"nested":{"id":1,"results":{}},"id":550,"results":[{"id":2}],"success":true,"title":"x"}"#
        let summary = try JSONScanner.scan(Array(body.utf8), watching: ["id", "results", "success"])
        #expect(summary.topLevel == .object)
        #expect(summary.members["id"] == JSONScanner.Member(kind: .number, text: "550"))
        #expect(summary.members["results"]?.kind == .array)
        #expect(summary.members["success"]?.kind == .true)
        #expect(summary.members["title"] == nil)
    }

    @Test(arguments: ["", "  ", "{", "[1,", #"{"a""#, #"{"a":"#, "tru", "-", "1.", "1e", #""abc"#])
    func saysWhereATextIsIncomplete(_ text: String) {
        #expect(throws: JSONScanner.Failure.self) { try JSONScanner.scan(Array(text.utf8)) }
    }

    @Test(
        arguments: [
            ("0", .number), ("-0.5e+10", .number), ("true", .true), ("false", .false), ("null", .null),
            (#""\u00e9""#, .string), ("[]", .array), ("{}", .object), (#"[1,"a",{"b":[null]}]"#, .array),
        ] as [(String, JSONScanner.Kind)])
    func acceptsEveryKindOfValueAtTheTopLevel(_ text: String, _ kind: JSONScanner.Kind) throws {
        #expect(try JSONScanner.scan(Array(text.utf8)).topLevel == kind)
    }
}
