import Testing

@testable import AmodbHTTP

/// An answer without content (204, 304) gets none of the fields that describe content
/// (RFC 9110 §6.4.1, §15.4.5), whatever its responder set: no `Content-Encoding` from
/// `contentEncoding`, no `Content-Length`, and no `Content-Type` or `Content-Encoding`
/// among its headers. A HEAD of a 200 keeps them all, as they describe the GET's content.
struct NoContentFieldsTests {
    static func response(status: Int) -> HTTPResponse {
        var rendered = RenderedFields()
        rendered.append { $0.write("ETag: \"t-gzip\"\r\n") }
        let headers = HTTPHeaders([
            ("Content-Type", "application/json"), ("content-encoding", "gzip"), ("Content-Length", "9"),
            ("Vary", "Accept-Encoding"),
        ])
        return HTTPResponse(
            status: status, renderedFields: rendered, headers: headers,
            body: status == 200 ? Array("{\"a\":1}".utf8) : [],
            contentEncoding: "gzip")
    }

    static func head(_ response: HTTPResponse, isHead: Bool = false) -> String {
        String(
            decoding: ResponseSerializer.serialize(response, isHead: isHead, closing: false, version: .http1_1, now: 0)
                .head, as: UTF8.self)
    }

    @Test(
        "A 304 or 204 sends its validator and no content fields",
        arguments: [(304, "Not Modified"), (204, "No Content")])
    func anAnswerWithoutContentSendsNoContentFields(status: Int, reason: String) {
        for isHead in [false, true] {
            #expect(
                Self.head(Self.response(status: status), isHead: isHead) == """
                    HTTP/1.1 \(status) \(reason)\r
                    ETag: "t-gzip"\r
                    Vary: Accept-Encoding\r
                    Date: Thu, 01 Jan 1970 00:00:00 GMT\r
                    \r

                    """)
        }
    }

    @Test func aHeadOfA200KeepsTheContentFieldsOfItsGet() {
        var response = Self.response(status: 200)
        response.headers = HTTPHeaders([("Content-Type", "application/json"), ("Vary", "Accept-Encoding")])
        let get = Self.head(response)
        #expect(Self.head(response, isHead: true) == get)
        #expect(
            get == """
                HTTP/1.1 200 OK\r
                ETag: "t-gzip"\r
                Content-Type: application/json\r
                Vary: Accept-Encoding\r
                Date: Thu, 01 Jan 1970 00:00:00 GMT\r
                Content-Encoding: gzip\r
                Content-Length: 7\r
                \r

                """)
    }
}
