import AmodbProxy
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// A herd spread over every replica makes one call to amodb.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct FleetCoalescingTests {
    @Test(arguments: RedisTransport.available)
    func eightyConcurrentRequestsForOneColdPathSpreadOverThreeReplicasMakeOneUpstreamCall(_ transport: RedisTransport)
        async throws
    {
        let upstream = ScriptedUpstream()
        upstream.hold()  // the one call stays in flight until all eighty have asked
        try await withFleet(3, upstream: upstream, transport: transport) {
            (fleet: Fleet, _: RedisServer) async throws in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<80 {
                    let replica = fleet[index % 3]
                    group.addTask { try await replica.get("/3/trending/all/day").status }
                }
                // Every request has joined a lease (each replica's own, or led its own) and one call is held.
                #expect(await eventually { upstream.heldCount == 1 && fleet.misses == 80 })
                upstream.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 80)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(upstream.calls == ["/trending/all/day"])
        }
    }

    @Test func aHerdOverThreeReplicasForAPathAmodbFailsMakesOneCallAndEveryClientGetsItsAnswer() async throws {
        let upstream = ScriptedUpstream(fallback: .response(UpstreamResponse(status: 500, body: Array("{}".utf8))))
        upstream.hold()  // the one call stays in flight until all thirty have asked
        try await withFleet(3, upstream: upstream) { (fleet: Fleet, _: RedisServer) async throws in
            let answers = try await withThrowingTaskGroup(of: RawHTTPResponse.self) { group in
                for index in 0..<30 {
                    let replica = fleet[index % 3]
                    group.addTask { try await replica.get("/3/movie/550") }
                }
                #expect(await eventually { upstream.heldCount == 1 && fleet.misses == 30 })
                upstream.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(upstream.calls == ["/movie/550"])
            #expect(answers.count == 30)
            for answer in answers {
                #expect(answer.status == 502)
                #expect(answer.text.contains("amodb failed with status 500."))
                #expect(answer.header("Cache-Status")?.contains("fwd-status=500") == true)
            }
        }
    }

    @Test func aRequestArrivingAfterAFailureWasSharedCallsAgain() async throws {
        let upstream = ScriptedUpstream(
            fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
        upstream.enqueue(.response(UpstreamResponse(status: 500, body: Array("{}".utf8))))
        try await withFleet(2, upstream: upstream) { (fleet: Fleet, _: RedisServer) async throws in
            #expect(try await fleet[0].get("/3/movie/550").status == 502)
            // The herd that failure answered is gone; a new request is a new attempt.
            #expect(try await fleet[1].get("/3/movie/550").status == 200)
            #expect(upstream.calls == ["/movie/550", "/movie/550"])
        }
    }

    @Test func aHerdOverThreeReplicasForAHungAmodbMakesOneCallAndNobodyWaitsPastTheTimeout() async throws {
        // amodb never answers: the fetcher gives up after the upstream timeout, 6 s (long
        // enough that a busy machine's delays stay well short of a second timeout).
        let upstream = ScriptedUpstream(fallback: .failure(.timedOut))
        upstream.setDelay(milliseconds: 6_000)
        try await withFleet(3, upstream: upstream, adjust: { $0.upstreamTimeout = 6 }) {
            (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            let answers = try await withThrowingTaskGroup(of: (Int, Duration).self) { group in
                for index in 0..<12 {
                    let replica = fleet[index % 3]
                    group.addTask {
                        let started = ContinuousClock.now
                        let status = try await replica.get("/3/movie/550").status
                        return (status, ContinuousClock.now - started)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(upstream.calls == ["/movie/550"])
            #expect(answers.allSatisfy { $0.0 == 504 })
            let slowest = answers.map(\.1).max() ?? .zero
            // Within the timeout and a margin for a busy machine, short of a second timeout:
            // a waiter that made or waited out a call of its own would take 12 s.
            #expect(
                slowest < .seconds(10),
                "every client answered within the timeout and a margin (\(answers))")
        }
    }

    @Test func aReplicaWhoseLeaseHolderNeverAnnouncesFetchesItselfOnceTheLeaseLapses() async throws {
        try await withFleet(1, adjust: { $0.upstreamTimeout = 0.5 }) {
            (fleet: Fleet, server: RedisServer) async throws in
            // Another replica took the lease and died: no announcement, no entry.
            try await withRedisClient(server.configuration()) { redis in
                _ = try await redis.set(
                    "amodb-proxy:lease:/movie/550", Array("gone".utf8), condition: .ifNotExists,
                    expiry: .milliseconds(1_500))
            }
            let answer = try await fleet[0].get("/3/movie/550")
            #expect(answer.status == 200)
            #expect(fleet.upstream.calls == ["/movie/550"])
        }
    }

    @Test func aClientWaitingOnALeaseThatOutlivesItsTimeIsToldToComeBackNotA504() async throws {
        try await withFleet(1, adjust: { $0.upstreamTimeout = 0.5 }) {
            (fleet: Fleet, server: RedisServer) async throws in
            // A lease that outlives the waiter's patience (the upstream timeout and 2 s), with
            // nothing ever announced: its holder was killed.
            try await withRedisClient(server.configuration()) { redis in
                _ = try await redis.set(
                    "amodb-proxy:lease:/movie/550", Array("gone".utf8), condition: .ifNotExists,
                    expiry: .seconds(10))
            }
            let answer = try await fleet[0].get("/3/movie/550")
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "1")
            #expect(fleet.upstream.calls.isEmpty)
        }
    }
}
