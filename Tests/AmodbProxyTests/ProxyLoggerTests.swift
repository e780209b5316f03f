import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

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

    @Test func scrubsTheAppTokensInForceFromEveryCopy() throws {
        let capture = LogCapture()
        let logger = ProxyLogger(secrets: [Secret("the-amodb-key")], sink: capture.sink)
        let copy = logger
        logger.scrubTokens([Secret("token-from-the-file"), Secret("token-from-the-setting")])
        copy.error("the-amodb-key token-from-the-file token-from-the-setting")
        #expect(capture.all.last?.contains("<redacted> <redacted> <redacted>") == true)
        // A reload hands over the tokens now in force; the key stays scrubbed.
        logger.scrubTokens([Secret("a-token-added-later")])
        copy.error("the-amodb-key a-token-added-later")
        #expect(capture.all.last?.contains("<redacted> <redacted>") == true)
        #expect(logger.scrubbed("GET") == "GET", "shorter than every secret: passed on as it is")
        #expect(logger.scrubbed("/3/a-token-added-later") == "/3/<redacted>")
    }

    @Test func writesTextWhenAsked() throws {
        let capture = LogCapture()
        ProxyLogger(format: .text, sink: capture.sink).warning(
            "amodb failed", ["path": "/movie/{movie_id}", "upstream_status": "500"])
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
