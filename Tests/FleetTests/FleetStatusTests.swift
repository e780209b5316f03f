import AmodbRedisTestSupport
import AmodbTestSupport
import Foundation
import Testing

/// `/status.json` of replicas sharing one Redis: Redis up and the replicas seen; the
/// budget's window, calls and answers are each replica's own (as `/metrics` has them).
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct FleetStatusTests {
    @Test func eachReplicaShowsRedisTheReplicasAndItsOwnCalls() async throws {
        try await withFleet(2) { fleet, _ in
            try #require(await fleet.seeEachOther())
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            #expect(try await fleet[1].get("/3/movie/551").status == 200)
            for index in 0..<2 {
                // The fleet's part is what the last heartbeat saw: on a busy machine a beat
                // may come late enough that a replica briefly sees only itself, so the page
                // must show both once they beat again, not in one particular instant.
                var fleetStatus: [String: Any] = [:]
                let sawBoth = try await eventually(within: 30) {
                    fleetStatus = try await Self.status(of: fleet[index])["fleet"] as? [String: Any] ?? [:]
                    return fleetStatus["replicas"] as? Int == 2 && fleetStatus["redis"] as? String == "up"
                }
                #expect(sawBoth, "replica \(index): \(fleetStatus)")
                #expect(fleetStatus["outage"] as? Bool == false)
                let status = try await Self.status(of: fleet[index])
                let budget = try #require(status["budget"] as? [String: Any])
                #expect(budget["used"] as? Int == 1, "\(budget)")
                #expect(budget["calls"] as? Int == 1, "\(budget)")
                #expect(budget["limit"] as? Int == 40, "the key's")
                let answers = try #require(status["answers"] as? [String: Any])
                #expect(answers["filled"] as? Int == 1)
            }
        }
    }

    private static func status(of replica: ProxyHarness) async throws -> [String: Any] {
        let response = try await replica.get("/status.json")
        #expect(response.status == 200)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }
}
