import Foundation
import Testing

@testable import AmodbProxy

/// A member read as a `JSONValue`: each kind kept apart (a number is no Bool and `true` no
/// number, `null` is there and not missing), an array's strings kept only when every element
/// is one, nesting of any depth read in a few tries, and what is no JSON value refused.
struct JSONValueTests {
    /// The member `m` of an object, read as the token and key-set readers read one.
    struct Member: Decodable {
        let value: JSONValue?

        private enum CodingKeys: String, CodingKey {
            case m
        }

        init(from decoder: any Decoder) throws {
            value = try decoder.container(keyedBy: CodingKeys.self).member(.m)
        }
    }

    static func member(_ json: String) throws -> JSONValue? {
        try JSONDecoder().decode(Member.self, from: Data(#"{"m":\#(json)}"#.utf8)).value
    }

    @Test(
        arguments: [
            (#""sig""#, .string("sig")), (#""""#, .string("")), (#""\u00e9\n\"""#, .string("é\n\"")),
            (#""😀""#, .string("😀")), ("0", .number(0)), ("-5", .number(-5)), ("1.5", .number(1.5)),
            ("1e3", .number(1000)), ("1353604926", .number(1_353_604_926)), ("-1E-3", .number(-0.001)),
            ("9007199254740993", .number(9_007_199_254_740_992)),
            ("123456789012345678901234567890", .number(1.2345678901234568e29)), ("true", .bool(true)),
            ("false", .bool(false)), ("null", .null), ("[]", .array(strings: [])),
            (#"["verify","sign"]"#, .array(strings: ["verify", "sign"])), (#"["a",1]"#, .array(strings: nil)),
            (#"[["a"]]"#, .array(strings: nil)), ("[null]", .array(strings: nil)), ("[true]", .array(strings: nil)),
            ("{}", .object), (#"{"a":[1,{"b":"c"}]}"#, .object),
        ] as [(String, JSONValue)])
    func readsEachKind(_ json: String, _ value: JSONValue) throws {
        #expect(try Self.member(json) == value)
    }

    @Test func aNumberIsNoBoolAndABoolNoNumber() throws {
        #expect(try Self.member("1") == .number(1))
        #expect(try Self.member("0") == .number(0))
        #expect(try Self.member("true") == .bool(true))
        #expect(try Self.member("false") == .bool(false))
        #expect(try Self.member(#""1""#) == .string("1"))
    }

    @Test func aMissingMemberIsNilAndANullOneIsNull() throws {
        #expect(try JSONDecoder().decode(Member.self, from: Data(#"{"n":1}"#.utf8)).value == nil)
        #expect(try Self.member("null") == .null)
    }

    @Test func textAndStringsAreOnlyForStringsAndArraysOfStrings() throws {
        #expect(JSONValue.string("a").text == "a")
        #expect(JSONValue.array(strings: ["a"]).strings == ["a"])
        #expect(JSONValue.array(strings: []).strings == [])
        for other in [JSONValue.number(1), .bool(true), .null, .object, .array(strings: nil)] {
            #expect(other.text == nil && other.strings == nil)
        }
        #expect(JSONValue.string("a").strings == nil && JSONValue.array(strings: ["a"]).text == nil)
    }

    /// Each level of a nested value read whole would cost another round of failed tries (0.8 s
    /// for 510 arrays); read as a kind, the deepest JSONDecoder accepts is a few tries.
    @Test func aDeeplyNestedValueIsReadAsItsKindAlone() throws {
        let depth = 510
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(try Self.member(arrays) == .array(strings: nil))
        #expect(try Self.member("[" + #""a","# + arrays + "]") == .array(strings: nil))
        #expect(try Self.member(objects) == .object)
        // Past JSONDecoder's limit (512 levels, the object around included) the text is refused.
        let tooDeep = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: (any Error).self) { try Self.member(tooDeep) }
    }

    @Test(arguments: ["1e400", "-1e400", "1e-400", #""\ud800""#, #""a\x""#, "01", "1.", "tru", "nul"])
    func whatIsNoJSONValueIsRefused(_ json: String) {
        #expect(throws: (any Error).self) { try Self.member(json) }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        let text = Array(#"{"m":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Member.self, from: Data(text)) }
    }

    @Test(arguments: ["", "[]", #""m""#, "5", "null", #"{"m":1"#, #"{"m":1}x"#])
    func whatIsNoJSONObjectIsRefused(_ text: String) {
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Member.self, from: Data(text.utf8)) }
    }
}
