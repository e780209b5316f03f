import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// `AMODB_ACCESS_LOG=off` writes no line at all; on, every request has its line, including
/// one refused before routing (malformed HTTP), logged with route `invalid`.
@Suite(.timeLimit(.minutes(1)))
struct AccessLogSettingTests {
    @Test("The access log writes one line per request when on, and none when off", arguments: [true, false])
    func theAccessLogSettingIsObeyed(on: Bool) async throws {
        let setup = try SandboxedProxy { $0.accessLog = on }
        try await withServer(setup) { setup in
            var statuses: [Int] = []
            statuses.append(try await setup.harness.get("/3/movie/550").status)
            statuses.append(try await setup.harness.get("/3/nothing/here").status)
            statuses.append(try await setup.harness.get("/healthz").status)
            // no Host
            let refused = try await setup.harness.exchange(Array("GET / HTTP/1.1\r\n\r\n".utf8), expecting: 1)
            statuses.append(contentsOf: refused.responses.map(\.status))
            #expect(statuses == [200, 404, 200, 400])
            // A line is written before its answer is handed to the connection: once every
            // answer is in, every line is too.
            let lines = setup.accessLog.all
            if on {
                let routes = try lines.map {
                    try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["route"]
                        as? String
                }
                #expect(routes == ["/3/movie/{movie_id}", "unmatched", "/healthz", "invalid"])
            } else {
                #expect(lines.isEmpty, "\(lines)")
            }
        }
    }
}
