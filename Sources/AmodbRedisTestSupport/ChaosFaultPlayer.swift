public import AmodbSandbox
public import AmodbTestSupport

/// Plays a `ChaosSchedule` on a real Redis, replicas that are child processes and the
/// stand-in amodb, noting each fault in the timeline as it really starts and ends.
///
/// Each track plays one fault at a time, each at its offset or, if the one before it ran
/// late (a replica slow to start on a loaded machine), as soon as that one has ended: the
/// order is the seed's, the instants are the timeline's. A replica restarted by a fault is
/// waited for (its "listening" line), not given a fixed time.
public struct ChaosFaultPlayer: Sendable {
    /// The fleet's Redis; nil for a replica alone.
    public var redis: RedisServer?
    public var replicas: [ProxyReplica]
    public var amodb: AmodbSandbox
    public var timeline: ChaosTimeline

    public init(redis: RedisServer?, replicas: [ProxyReplica], amodb: AmodbSandbox, timeline: ChaosTimeline) {
        self.redis = redis
        self.replicas = replicas
        self.amodb = amodb
        self.timeline = timeline
    }

    /// Plays every fault of `schedule`, offsets counted from the timeline's start; returns
    /// once the last has ended, with Redis running and amodb answering as usual.
    public func play(_ schedule: ChaosSchedule) async {
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
        case .amodbRefusal(let length, let retryAfter):
            amodb.script("*", .rateLimited(retryAfter: retryAfter))
            timeline.note(
                "amodb answers every call 429 (Retry-After: \(retryAfter)) for \(ChaosTimeline.shown(length))")
            try? await Task.sleep(for: length)
            amodb.clearScripts()
            timeline.note("amodb answers as usual again")
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
