import Testing

@testable import AmodbHTTP

/// Every status line carries the reason phrase RFC 9110 §15 gives its code.
struct StatusLineTests {
    @Test(
        "A status line has its RFC 9110 reason phrase",
        arguments: [
            (200, "OK"), (304, "Not Modified"), (400, "Bad Request"), (401, "Unauthorized"), (404, "Not Found"),
            (405, "Method Not Allowed"), (406, "Not Acceptable"), (408, "Request Timeout"), (413, "Content Too Large"),
            (414, "URI Too Long"), (429, "Too Many Requests"), (431, "Request Header Fields Too Large"),
            (501, "Not Implemented"), (502, "Bad Gateway"), (503, "Service Unavailable"), (504, "Gateway Timeout"),
            (505, "HTTP Version Not Supported"),
        ])
    func statusLineHasItsReasonPhrase(status: Int, reason: String) {
        let head = ResponseSerializer.serialize(
            HTTPResponse(status: status, body: []), isHead: false, closing: false, version: .http1_1, now: 0
        ).head
        let statusLine = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        #expect(statusLine == "HTTP/1.1 \(status) \(reason)")
    }

    @Test func everyCodeRFC9110DefinesHasAPhrase() {
        let defined =
            [100, 101, 200, 201, 202, 203, 204, 205, 206, 300, 301, 302, 303, 304, 305, 307, 308]
            + Array(400...417) + [421, 422, 426, 429, 431] + Array(500...505)
        for status in defined {
            #expect(HTTPStatusText.reason(status) != "Unknown", "\(status)")
        }
        #expect(HTTPStatusText.reason(299) == "Unknown")
    }
}
