import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A client token pasted into a path or sent as the method is logged `<redacted>`, from
/// `AMODB_PROXY_TOKENS` and from `AMODB_PROXY_TOKENS_FILE` alike, a token added to the
/// file while running included.
@Suite(.timeLimit(.minutes(1)))
struct TokenFileScrubbingTests {
    @Test func tokensFromTheSettingAndTheFileAreRedactedInTheAccessLog() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let setting = "setting-token-0d7c51e9"
        let fromFile = "file-token-6a2f88b0"
        let added = "added-token-9e14c3d7"
        try "\(fromFile)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let proxy = try SandboxedProxy {
            $0.clientTokens = [Secret(setting)]
            $0.clientTokensFile = file
        }
        try await withServer(proxy) { setup throws in
            #expect(try await setup.harness.get("/3/\(setting)").status == 401)
            #expect(try await setup.harness.get("/3/\(fromFile)").status == 401)
            let asMethod = try await setup.harness.exchange(
                Array("\(fromFile) /3/movie/550 HTTP/1.1\r\nHost: a\r\n\r\n".utf8), expecting: 1)
            #expect(asMethod.responses.first?.status == 405)

            try "\(fromFile)\n\(added)\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(await eventually(within: 30) { setup.harness.proxy.tokens.count == 3 })
            #expect(
                try await setup.harness.get("/3/\(added)", headers: ["Authorization": "Bearer \(added)"]).status == 404)
            #expect(await eventually { setup.accessLog.all.count == 4 })

            let objects = try setup.accessLog.all.map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["path"] as? String } == ["/3/<redacted>", "/3/<redacted>", nil, "/3/<redacted>"])
            #expect(objects.map { $0["method"] as? String } == ["GET", "GET", "<redacted>", "GET"])
            for line in setup.accessLog.all + setup.logLines {
                #expect(![setting, fromFile, added].contains { line.contains($0) })
            }
        }
    }
}
