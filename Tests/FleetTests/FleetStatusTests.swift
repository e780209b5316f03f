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
                let response = try await fleet[index].get("/status.json")
                #expect(response.status == 200)
                let status = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
                let fleetStatus = try #require(status["fleet"] as? [String: Any])
                #expect(fleetStatus["redis"] as? String == "up")
                #expect(fleetStatus["replicas"] as? Int == 2)
                #expect(fleetStatus["outage"] as? Bool == false)
                let budget = try #require(status["budget"] as? [String: Any])
                #expect(budget["used"] as? Int == 1, "\(budget)")
                #expect(budget["calls"] as? Int == 1, "\(budget)")
                #expect(budget["limit"] as? Int == 40, "the key's")
                let answers = try #require(status["answers"] as? [String: Any])
                #expect(answers["filled"] as? Int == 1)
            }
        }
    }
}
