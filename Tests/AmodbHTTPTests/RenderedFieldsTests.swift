import Testing

@testable import AmodbHTTP

/// `RenderedFields` counts (a number as its widest), then writes: the bytes are those of the
/// lines, whatever they hold, the widest numbers included.
struct RenderedFieldsTests {
    @Test(
        "Lines are written as they read",
        arguments: [
            ("", 0, ""), ("text", 7, "text"), ("café ☕︎", -12, "café ☕︎"),
            (String(repeating: "x", count: 1000), Int.max, ""), ("x", Int.min, "-"),
        ])
    func linesAreWrittenAsTheyRead(value: String, number: Int, tail: String) {
        var fields = RenderedFields()
        fields.append { lines in
            lines.line("Name", value)
            lines.line("Count: ", number: number)
        }
        fields.append("Tail", tail)
        fields.append { _ in }
        #expect(
            String(decoding: fields.bytes, as: UTF8.self) == "Name: \(value)\r\nCount: \(number)\r\nTail: \(tail)\r\n")
    }

    @Test func aResponseWritesItsRenderedLinesBeforeItsHeaders() {
        var response = HTTPResponse(status: 404, headers: HTTPHeaders([("X-After", "1")]), body: Array("{}".utf8))
        response.renderedFields = RenderedFields(reservingCapacity: 64)
        response.renderedFields.append { $0.write("X-Before: 0\r\n") }
        response.contentEncoding = "br"
        let head = ResponseSerializer.serialize(response, isHead: false, closing: true, version: .http1_1, now: 0).head
        #expect(
            String(decoding: head, as: UTF8.self) == """
                HTTP/1.1 404 Not Found\r
                X-Before: 0\r
                X-After: 1\r
                Date: Thu, 01 Jan 1970 00:00:00 GMT\r
                Content-Encoding: br\r
                Content-Length: 2\r
                Connection: close\r
                \r

                """)
    }

    /// The coding reads back as it was set, in the initializer or after; an empty one is
    /// none (no `Content-Encoding` line), as is `nil`.
    @Test(arguments: [("br", "br"), ("gzip", "gzip"), (nil, nil), ("", nil)] as [(String?, String?)])
    func aResponsesCodingReadsBackAsSet(set: String?, expected: String?) {
        var response = HTTPResponse(status: 200, body: Array("{}".utf8), contentEncoding: set)
        #expect(response.contentEncoding == expected)
        response.contentEncoding = "br"
        response.contentEncoding = set
        #expect(response.contentEncoding == expected)
        let head = ResponseSerializer.serialize(response, isHead: false, closing: false, version: .http1_1, now: 0).head
        let text = String(decoding: head, as: UTF8.self)
        #expect(text.contains("Content-Encoding: ") == (expected != nil))
        if let expected { #expect(text.contains("Content-Encoding: \(expected)\r\n")) }
    }

    /// A connection writes each head over the storage of the one before: a head still held
    /// (unsent) keeps its bytes, a longer head grows the storage, and every head is exactly
    /// the one its answer would have alone.
    @Test func headsWrittenOverOneStorageKeepTheirOwnBytes() {
        func answer(_ status: Int, _ field: String) -> HTTPResponse {
            var response = HTTPResponse(status: status, body: Array("{}".utf8))
            response.renderedFields = RenderedFields(shared: Array(field.utf8)[...], reservingCapacity: 0)
            return response
        }
        let answers = [
            answer(200, "A: 1\r\n"), answer(404, "B: 22\r\n"),
            answer(200, "C: " + String(repeating: "c", count: 700) + "\r\n"), answer(304, "D: 4\r\n"),
        ]
        var storage: [UInt8] = []
        var held: [(head: ArraySlice<UInt8>, alone: ArraySlice<UInt8>)] = []
        for response in answers {
            let head = ResponseSerializer.serialize(
                response, isHead: false, closing: false, version: .http1_1, now: 0, into: &storage)
            let alone = ResponseSerializer.serialize(response, isHead: false, closing: false, version: .http1_1, now: 0)
            #expect(head.head == alone.head)
            #expect(head.body == alone.body)
            held.append((head.head, alone.head))
        }
        for (head, alone) in held {
            #expect(head == alone)
        }
        #expect(storage.count >= 700)
    }
}
