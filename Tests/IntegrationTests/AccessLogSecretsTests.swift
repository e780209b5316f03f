import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

/// The key never reaches an access-log line, wherever a client puts it: in a path the
/// log shows, as the method, or in a header a trusted proxy forwards.
@Suite(.timeLimit(.minutes(1)))
struct AccessLogSecretsTests {
    @Test func aKeySentAsPathMethodOrForwardedAddressIsNotLogged() async throws {
        let accessLog = LogCapture()
        var configuration = ProxyHarness.configuration()
        configuration.trustedProxies = ["127.0.0.1"]
        let harness = try ProxyHarness(
            .live, configuration: configuration, fetcher: ScriptedUpstream(), accessLog: accessLog)
        let key = ProxyHarness.key
        try await withServer(harness) { harness throws in
            #expect(try await harness.get("/3/\(key)").status == 404)
            #expect(try await harness.get("/healthz", headers: ["X-Forwarded-For": key]).status == 200)
            let asMethod = try await harness.exchange(
                Array("\(key) /3/movie/550 HTTP/1.1\r\nHost: a\r\n\r\n".utf8), expecting: 1)
            #expect(asMethod.responses.first?.status == 405)
            // no Host
            let refused = try await harness.exchange(Array("GET /x/\(key)/y HTTP/1.1\r\n\r\n".utf8), expecting: 1)
            #expect(refused.responses.first?.status == 400)
            #expect(await eventually { accessLog.all.count == 4 })

            let objects = try accessLog.all.map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["path"] as? String } == ["/3/<redacted>", nil, nil, "/x/<redacted>/y"])
            #expect(objects.map { $0["method"] as? String } == ["GET", "GET", "<redacted>", "-"])
            #expect(
                objects.map { $0["route"] as? String } == ["unmatched", "/healthz", "/3/movie/{movie_id}", "invalid"])
            #expect(objects.map { $0["client"] as? String } == ["127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"])
            for line in accessLog.all {
                #expect(!line.contains(key))
            }
        }
    }
}
