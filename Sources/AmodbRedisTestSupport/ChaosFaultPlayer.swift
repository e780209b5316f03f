import AmodbRedis
package import AmodbSandbox
package import AmodbTestSupport
import Foundation

/// Plays a `ChaosSchedule` on a real Redis, replicas that are child processes and the
/// stand-in amodb, noting each fault in the timeline as it really starts and ends.
///
/// Each track plays one fault at a time, each at its offset or, if the one before it ran
/// late (a replica slow to start on a loaded machine), as soon as that one has ended: the
/// order is the seed's, the instants are the timeline's. A replica restarted by a fault is
/// waited for (its "listening" line), not given a fixed time.
package struct ChaosFaultPlayer: Sendable {
    /// The fleet's Redis; nil for a replica alone.
    package var redis: RedisServer?
    package var replicas: [ProxyReplica]
    package var amodb: AmodbSandbox
    package var timeline: ChaosTimeline
    /// Each replica's own link to Redis, in the replicas' order (empty: none to cut).
    package var links: [TCPRelay]

    package init(
        redis: RedisServer?, replicas: [ProxyReplica], amodb: AmodbSandbox, timeline: ChaosTimeline,
        links: [TCPRelay] = []
    ) {
        self.redis = redis
        self.replicas = replicas
        self.amodb = amodb
        self.timeline = timeline
        self.links = links
    }

    /// Plays every fault of `schedule`, offsets counted from the timeline's start; returns
    /// once the last has ended, with Redis running and amodb answering as usual.
    package func play(_ schedule: ChaosSchedule) async {
        async let infrastructure: Void = playTrack(schedule.entries.filter { !$0.fault.isAmodbs })
        async let amodbs: Void = playTrack(schedule.entries.filter { $0.fault.isAmodbs })
        _ = await (infrastructure, amodbs)
    }

    private func playTrack(_ entries: [ChaosSchedule.Entry]) async {
        for entry in entries {
            try? await Task.sleep(until: timeline.start + entry.offset, clock: .continuous)
            await play(entry.fault)
        }
    }

    private func play(_ fault: ChaosSchedule.Fault) async {
        switch fault {
        case .redisPause(let length):
            guard let redis else { return }
            redis.pause()
            timeline.note("redis paused (SIGSTOP) for \(ChaosTimeline.shown(length))")
            try? await Task.sleep(for: length)
            redis.resume()
            timeline.note("redis resumed (SIGCONT)")
        case .redisFlush:
            guard let redis else { return }
            do {
                try await withRedisClient(redis.configuration()) { client in _ = try await client.send(["FLUSHALL"]) }
                timeline.note("redis FLUSHALL done")
            } catch {
                timeline.note("redis FLUSHALL failed: \(error)")
            }
        case .redisRestart:
            guard let redis else { return }
            timeline.note("redis killed, restarting empty")
            do {
                try await redis.restart()
                timeline.note("redis ready again, empty")
            } catch {
                timeline.note("redis did not start again: \(error)")
            }
        case .replicaKill(let index, let downtime):
            let replica = replicas[index]
            await replica.kill()
            timeline.note("\(replica.name) killed (SIGKILL); down for \(ChaosTimeline.shown(downtime))")
            try? await Task.sleep(for: downtime)
            await start(replica)
        case .replicaStartDuringRedisPause(let index, let pause):
            let replica = replicas[index]
            await replica.kill()
            timeline.note("\(replica.name) killed (SIGKILL)")
            redis?.pause()
            timeline.note("redis paused (SIGSTOP) for \(ChaosTimeline.shown(pause)) while \(replica.name) starts")
            launch(replica)
            try? await Task.sleep(for: pause)
            redis?.resume()
            timeline.note("redis resumed (SIGCONT)")
            await waitUntilListening(replica)
        case .linkStall(let index, let length), .linkRefuse(let index, let length):
            guard links.indices.contains(index) else { return }
            let stall = if case .linkStall = fault { true } else { false }
            links[index].set(stall ? .stalled : .refusing)
            timeline.note(
                "\(replicas[index].name)'s link to redis \(stall ? "stalled" : "refusing") for \(ChaosTimeline.shown(length))"
            )
            try? await Task.sleep(for: length)
            links[index].set(.open)
            timeline.note("\(replicas[index].name)'s link to redis open again")
        case .budgetKeyDeleted(let key):
            await redisCommand(["DEL", .bulk("amodb-proxy:budget:" + key)], "DEL amodb-proxy:budget:\(key)")
        case .redisOlderSnapshot(let length):
            guard let redis else { return }
            await redisCommand(["SAVE"], "redis SAVE (the snapshot)")
            try? await Task.sleep(for: length)
            timeline.note("redis killed, restarting from the snapshot saved \(ChaosTimeline.shown(length)) ago")
            do {
                try await redis.restart()
                timeline.note("redis ready again, from the older snapshot")
            } catch {
                timeline.note("redis did not start again: \(error)")
            }
            // Later restarts are empty again.
            try? FileManager.default.removeItem(atPath: redis.snapshotPath)
        case .redisEviction:
            await evictBudgetCalls()
        case .burstKillFlush(let index, let downtime):
            let replica = replicas[index]
            let sent = await burst(on: replica, count: 8)
            await replica.kill()
            await redisCommand(["FLUSHALL"], "\(replica.name) burst \(sent) cold paths, was killed, redis FLUSHALL")
            try? await Task.sleep(for: downtime)
            await start(replica)
        case .replicaRestartedTwice(let gap):
            let replica = replicas[0]
            await replica.kill()
            timeline.note("\(replica.name) killed (SIGKILL), starting again at once")
            await start(replica)
            try? await Task.sleep(for: gap)
            await replica.terminate()
            timeline.note("\(replica.name) stopped (SIGTERM), starting again at once")
            await start(replica)
        case .amodbRefusal(let length, let retryAfter):
            amodb.script("*", .rateLimited(retryAfter: retryAfter))
            timeline.note(
                "amodb answers every call 429 (Retry-After: \(retryAfter)) for \(ChaosTimeline.shown(length))")
            try? await Task.sleep(for: length)
            amodb.clearScripts()
            timeline.note("amodb answers as usual again")
        }
    }

    /// Sends `command` to Redis and notes `what` (or why it failed).
    private func redisCommand(_ command: [RedisValue], _ what: String) async {
        guard let redis else { return }
        do {
            try await withRedisClient(redis.configuration()) { client in _ = try await client.send(command) }
            timeline.note(what)
        } catch {
            timeline.note("\(what) failed: \(error)")
        }
    }

    /// Limits Redis's memory with `allkeys-lru` and writes filler keys until the budget's
    /// calls are evicted; then lifts the limit and removes the filler.
    private func evictBudgetCalls() async {
        guard let redis else { return }
        do {
            try await withRedisClient(redis.configuration()) { client in
                let info = try await client.send(["INFO", "memory"]).string ?? ""
                let used =
                    info.split(separator: "\r\n").first { $0.hasPrefix("used_memory:") }
                    .flatMap { Int($0.dropFirst("used_memory:".count)) } ?? 1_000_000
                _ = try await client.send(["CONFIG", "SET", "maxmemory", .bulk(String(used + 2_000_000))])
                _ = try await client.send(["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"])
                let filler = RedisValue.bulk(String(repeating: "x", count: 4_000))
                var written = 0
                while written < 20_000, try await client.send(["EXISTS", "amodb-proxy:budget:calls"]).integer == 1 {
                    _ = try? await client.send(["SET", .bulk("chaos:filler:\(written)"), filler])
                    written += 1
                }
                let evicted = try await client.send(["EXISTS", "amodb-proxy:budget:calls"]).integer == 0
                _ = try await client.send(["CONFIG", "SET", "maxmemory", "0"])
                _ = try await client.send(["CONFIG", "SET", "maxmemory-policy", "noeviction"])
                for start in stride(from: 0, to: written, by: 500) {
                    let keys = (start..<min(written, start + 500)).map { RedisValue.bulk("chaos:filler:\($0)") }
                    _ = try await client.send(["DEL"] + keys)
                }
                timeline.note(
                    "redis under maxmemory with allkeys-lru: \(written) filler keys, the budget's calls \(evicted ? "evicted" : "still there")"
                )
            }
        } catch {
            timeline.note("redis eviction failed: \(error)")
        }
    }

    /// `count` cold paths (ids amodb does not have: each one a call) sent at once to `replica`;
    /// returns how many were answered.
    private func burst(on replica: ProxyReplica, count: Int) async -> Int {
        guard let port = replica.endpoint?.port else { return 0 }
        let base = Int.random(in: 10_000_000..<90_000_000)
        return await withTaskGroup(of: Bool.self) { group in
            for index in 0..<count {
                group.addTask {
                    (try? await offloaded {
                        let connection = try RawHTTPConnection(port: port, timeout: 5)
                        defer { connection.close() }
                        try connection.send(
                            "GET /3/movie/\(base + index) HTTP/1.1\r\nHost: amodb-proxy.test\r\nConnection: close\r\n\r\n"
                        )
                        return try connection.readResponse() != nil
                    }) ?? false
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    private func start(_ replica: ProxyReplica) async {
        launch(replica)
        await waitUntilListening(replica)
    }

    private func launch(_ replica: ProxyReplica) {
        do {
            try replica.launch()
            timeline.note("\(replica.name) starting")
        } catch {
            timeline.note("\(replica.name) could not be started: \(error)")
        }
    }

    private func waitUntilListening(_ replica: ProxyReplica) async {
        if let port = await replica.waitUntilListening() {
            timeline.note("\(replica.name) listening on port \(port)")
        } else {
            timeline.note("\(replica.name) did not start listening within 30 s")
        }
    }
}
