@testable import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

struct ProxyLoggerTests {
    @Test func scrubsEverySecretFromEveryLine() throws {
        let capture = LogCapture()
        let logger = ProxyLogger(secrets: [Secret("the-amodb-key"), Secret("a-client-token")], sink: capture.sink)
        logger.error("leaked the-amodb-key here", ["field": "and a-client-token there", "again": "the-amodb-key"])
        let line = try #require(capture.all.first)
        #expect(!line.contains("the-amodb-key"))
        #expect(!line.contains("a-client-token"))
        #expect(line.components(separatedBy: "<redacted>").count == 4)
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["level"] == "error")
        #expect(object["message"] == "leaked <redacted> here")
    }

    @Test func writesTextWhenAsked() throws {
        let capture = LogCapture()
        ProxyLogger(format: .text, sink: capture.sink).warning("amodb failed", ["path": "/movie/{movie_id}", "upstream_status": "500"])
        let line = try #require(capture.all.first)
        #expect(line.hasSuffix(" warning amodb failed path=/movie/{movie_id} upstream_status=500"))
    }

    @Test func findsBytesLikeMemmem() {
        #expect(ByteSearch.contains(Array("abc-key-def".utf8), "key".utf8))
        #expect(!ByteSearch.contains(Array("abc-ke-def".utf8), "key".utf8))
        #expect(!ByteSearch.contains(Array("abc".utf8), "".utf8))
        #expect(ByteSearch.contains("x".utf8, "x".utf8))
    }
}
