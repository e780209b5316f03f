import Testing

@testable import AmodbHTTP

/// The head's scan and the field values are read eight bytes at a time while nothing in them
/// can matter: a long value (a user's ID token) must still be refused for any byte the byte
/// by byte reading refuses, wherever it falls in a word, and kept whole otherwise, whole or
/// fed in pieces.
struct LongFieldTests {
    static let token = String(repeating: "eyJhbGciOiJSUzI1NiJ9.abc-_XYZ", count: 22)

    /// Parses `head` whole, then in pieces of `chunk` bytes; both outcomes.
    static func parse(_ head: [UInt8], chunk: Int) -> [Result<ParsedHead, HTTPParseError>?] {
        [head.count, chunk].map { step in
            var parser = RequestHeadParser(limits: HTTPLimits())
            var buffer: [UInt8] = []
            var offset = 0
            while offset < head.count {
                buffer += head[offset..<min(head.count, offset + step)]
                offset += step
                do throws(HTTPParseError) {
                    if case .complete(let parsed, _) = try parser.parse(buffer, from: 0) { return .success(parsed) }
                } catch {
                    return .failure(error)
                }
            }
            return nil
        }
    }

    static func head(value: [UInt8]) -> [UInt8] {
        Array("GET /3/movie/550 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ".utf8) + value
            + Array("\r\nAccept: */*\r\n\r\n".utf8)
    }

    @Test func aLongValueIsKeptWholeWhateverItsLength() throws {
        for length in 0..<40 {
            let value = Self.token + String(repeating: "x", count: length) + " ~\u{7E}é"
            for outcome in Self.parse(Self.head(value: Array(value.utf8)), chunk: 7) {
                let parsed = try #require(try outcome?.get())
                #expect(parsed.request.headers["Authorization"] == "Bearer " + value)
                #expect(parsed.request.headers["Accept"] == "*/*")
            }
        }
    }

    @Test(arguments: [0x00, 0x01, 0x08, 0x0B, 0x0C, 0x0E, 0x1F, 0x7F] as [UInt8])
    func aControlByteOrDELAnywhereInALongValueIsRefused(_ bad: UInt8) {
        for position in 600..<616 {
            var value = Array(Self.token.utf8)
            value[position] = bad
            for outcome in Self.parse(Self.head(value: value), chunk: 5) {
                guard case .failure(let error) = outcome else {
                    Issue.record("byte \(bad) at \(position) was not refused")
                    continue
                }
                #expect(error == .malformedHeader)
            }
        }
    }

    @Test(arguments: ["\r", "\n", "\r\r\n", "\n\r"])
    func aBareCROrLFAnywhereInALongValueIsRefused(_ bad: String) {
        for position in 600..<616 {
            var value = Array(Self.token.utf8)
            value.replaceSubrange(position..<(position + 1), with: Array(bad.utf8))
            for outcome in Self.parse(Self.head(value: value), chunk: 3) {
                guard case .failure(let error) = outcome else {
                    Issue.record("\(bad.debugDescription) at \(position) was not refused")
                    continue
                }
                #expect(error == .malformedHeader)
            }
        }
    }

    @Test func tabsAndBytesAbove0x7FInALongValueAreKept() throws {
        var value = Array(Self.token.utf8)
        value[601] = 0x09
        value[609] = 0x80
        value[610] = 0xFF
        for outcome in Self.parse(Self.head(value: value), chunk: 11) {
            let parsed = try #require(try outcome?.get())
            let field = try #require(parsed.request.headers["Authorization"])
            // The two bytes that are no UTF-8 become replacement characters in the string.
            #expect(field.hasPrefix("Bearer " + String(decoding: value[..<601], as: UTF8.self) + "\t"))
            #expect(
                field.contains("\u{FFFD}\u{FFFD}") && field.hasSuffix(String(decoding: value[611...], as: UTF8.self)))
        }
    }
}
