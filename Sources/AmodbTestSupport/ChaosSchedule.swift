/// The faults of a chaos run, drawn from a seed: the same seed, length and fleet give the
/// same faults in the same order at the same offsets, so a failing run can be replayed.
///
/// Faults are on two tracks played side by side. The infrastructure track (Redis and the
/// replicas) plays one fault at a time, so each one's start and end are exact in the
/// timeline; amodb's refusals have a track of their own and overlap them freely. Each kind
/// a fleet can suffer comes once in a shuffled first round, so even a short run has them
/// all; later faults are drawn by weight.
package struct ChaosSchedule: Sendable {
    /// One fault, with how long it lasts.
    package enum Fault: Sendable, Equatable, CustomStringConvertible {
        /// Redis frozen (SIGSTOP) for this long: connections are accepted, nothing answers.
        case redisPause(Duration)
        /// Redis loses every key (`FLUSHALL`).
        case redisFlush
        /// Redis killed and started again on its port, empty.
        case redisRestart
        /// A replica killed (SIGKILL: all it held in memory is lost), started again after `downtime`.
        case replicaKill(replica: Int, downtime: Duration)
        /// A replica killed, Redis frozen, and the replica started again while Redis stays
        /// frozen for `pause`: it starts without seeing the fleet.
        case replicaStartDuringRedisPause(replica: Int, pause: Duration)
        /// amodb answers every call with 429 and `Retry-After: retryAfter` for this long.
        case amodbRefusal(Duration, retryAfter: Int)
        /// One replica's own link to Redis stalls (bytes held, connections open) for this
        /// long, while the others' work: a partition of that replica alone.
        case linkStall(replica: Int, Duration)
        /// One replica's own link to Redis refuses every connection for this long.
        case linkRefuse(replica: Int, Duration)
        /// One of the budget's keys deleted (`DEL`): `state` or `calls`.
        case budgetKeyDeleted(String)
        /// Redis `SAVE`d, more calls for this long, then restarted from the saved `dump.rdb`.
        case redisOlderSnapshot(Duration)
        /// `maxmemory` with `allkeys-lru`, and filler keys until the budget's calls are evicted.
        case redisEviction
        /// A burst of cold paths on a replica, then the replica killed and Redis flushed in
        /// the same second; the replica started again after `downtime`.
        case burstKillFlush(replica: Int, downtime: Duration)
        /// A lone replica killed (SIGKILL), started again, then stopped (SIGTERM) and
        /// started again, within a minute: `gap` between the two.
        case replicaRestartedTwice(gap: Duration)

        /// Whether it plays on amodb's track rather than the infrastructure's.
        package var isAmodbs: Bool {
            if case .amodbRefusal = self { true } else { false }
        }

        package var description: String {
            switch self {
            case .redisPause(let length): "redis paused for \(ChaosTimeline.shown(length))"
            case .redisFlush: "redis FLUSHALL"
            case .redisRestart: "redis restarted, empty"
            case .replicaKill(let replica, let downtime):
                "replica \(replica) killed, started again after \(ChaosTimeline.shown(downtime))"
            case .replicaStartDuringRedisPause(let replica, let pause):
                "replica \(replica) killed and started again while redis is paused for \(ChaosTimeline.shown(pause))"
            case .amodbRefusal(let length, let retryAfter):
                "amodb answers 429 (Retry-After: \(retryAfter)) for \(ChaosTimeline.shown(length))"
            case .linkStall(let replica, let length):
                "replica \(replica)'s link to redis stalled for \(ChaosTimeline.shown(length))"
            case .linkRefuse(let replica, let length):
                "replica \(replica)'s link to redis refused for \(ChaosTimeline.shown(length))"
            case .budgetKeyDeleted(let key): "DEL of the budget's \(key) key"
            case .redisOlderSnapshot(let length):
                "redis SAVEd, \(ChaosTimeline.shown(length)) more, restarted from the older snapshot"
            case .redisEviction: "redis evicts the budget's calls (maxmemory, allkeys-lru, filler keys)"
            case .burstKillFlush(let replica, let downtime):
                "replica \(replica) bursts, is killed, redis FLUSHALL in the same second; back after \(ChaosTimeline.shown(downtime))"
            case .replicaRestartedTwice(let gap):
                "the replica killed and started again, then stopped and started again \(ChaosTimeline.shown(gap)) later"
            }
        }
    }

    /// A fault and when it starts, from the start of the run.
    package struct Entry: Sendable, Equatable {
        package var offset: Duration
        package var fault: Fault
    }

    /// Every fault, earliest first.
    package let entries: [Entry]

    /// The faults for a run of `length` over `replicas` replicas: Redis and replica faults
    /// when `redis` is set (a fleet), a lone replica's restarts otherwise, amodb's refusals
    /// always. No fault starts in the first 3 s (the clients' first requests find a healthy
    /// fleet) or lasts into the last 8 s.
    package init(seed: UInt64, length: Duration, replicas: Int, redis: Bool) {
        var generator = SplitMix64(seed: seed)
        let end = length - .seconds(8)
        var entries: [Entry] = []
        if !redis {
            // Killed and restarted twice within a minute, once or twice a run.
            var offset = Self.uniform(8.0...20.0, &generator)
            while true {
                let fault = Fault.replicaRestartedTwice(gap: Self.uniform(4.0...15.0, &generator))
                guard offset + Self.nominalLength(of: fault) <= end else { break }
                entries.append(Entry(offset: offset, fault: fault))
                offset += Self.nominalLength(of: fault) + Self.uniform(20.0...40.0, &generator)
            }
        }
        if redis {
            var firstRound = Self.infrastructureKinds
            generator.shuffle(&firstRound)
            var offset = Self.uniform(3.0...5.0, &generator)
            while true {
                let kind = firstRound.isEmpty ? Self.weightedKind(&generator) : firstRound.removeFirst()
                let fault = Self.fault(kind, replicas: replicas, &generator)
                let lasts = Self.nominalLength(of: fault)
                guard offset + lasts <= end else { break }
                entries.append(Entry(offset: offset, fault: fault))
                offset += lasts + Self.uniform(2.0...7.0, &generator)
            }
        }
        var offset = Self.uniform(5.0...15.0, &generator)
        while true {
            let fault = Fault.amodbRefusal(Self.uniform(2.0...8.0, &generator), retryAfter: 2)
            guard offset + Self.nominalLength(of: fault) <= end else { break }
            entries.append(Entry(offset: offset, fault: fault))
            offset += Self.nominalLength(of: fault) + Self.uniform(8.0...25.0, &generator)
        }
        self.entries = entries.sorted { $0.offset < $1.offset }
    }

    /// The same run with only the faults `isIncluded` keeps, at the same offsets (a fleet
    /// on a Redis the schedule's Redis faults do not fit, such as a cluster).
    package func keeping(_ isIncluded: (Fault) -> Bool) -> ChaosSchedule {
        ChaosSchedule(entries: entries.filter { isIncluded($0.fault) })
    }

    private init(entries: [Entry]) {
        self.entries = entries
    }

    /// The kinds on the infrastructure track.
    private enum Kind: CaseIterable {
        case pause, flush, restart, kill, startDuringPause, linkStall, linkRefuse, keyDeleted, olderSnapshot,
            eviction, burstKillFlush
    }

    private static let infrastructureKinds = Kind.allCases

    /// Short pauses are the common case (a slow fork, a busy host); kills and restarts rarer.
    private static func weightedKind(_ generator: inout SplitMix64) -> Kind {
        let weights: [(Kind, Double)] = [
            (.pause, 5), (.flush, 1.5), (.restart, 1.5), (.kill, 2), (.startDuringPause, 1.5), (.linkStall, 2),
            (.linkRefuse, 1), (.keyDeleted, 1), (.olderSnapshot, 1), (.eviction, 0.5), (.burstKillFlush, 1),
        ]
        var pick = generator.unit() * weights.reduce(0) { $0 + $1.1 }
        for (kind, weight) in weights {
            if pick < weight { return kind }
            pick -= weight
        }
        return .pause
    }

    private static func fault(_ kind: Kind, replicas: Int, _ generator: inout SplitMix64) -> Fault {
        switch kind {
        case .pause: .redisPause(pause(&generator))
        case .flush: .redisFlush
        case .restart: .redisRestart
        case .kill:
            .replicaKill(replica: generator.below(replicas), downtime: uniform(0.5...4.0, &generator))
        case .startDuringPause:
            .replicaStartDuringRedisPause(replica: generator.below(replicas), pause: pause(&generator))
        case .linkStall: .linkStall(replica: generator.below(replicas), uniform(2.0...12.0, &generator))
        case .linkRefuse: .linkRefuse(replica: generator.below(replicas), uniform(2.0...8.0, &generator))
        case .keyDeleted: .budgetKeyDeleted(generator.below(2) == 0 ? "state" : "calls")
        case .olderSnapshot: .redisOlderSnapshot(uniform(2.0...6.0, &generator))
        case .eviction: .redisEviction
        case .burstKillFlush:
            .burstKillFlush(replica: generator.below(replicas), downtime: uniform(0.5...3.0, &generator))
        }
    }

    /// 50 ms to 3 s, most of them short: the square of a uniform number leans towards 0.
    private static func pause(_ generator: inout SplitMix64) -> Duration {
        let unit = generator.unit()
        return .milliseconds(50 + Int(unit * unit * 2950))
    }

    /// How long a fault lasts as scheduled (a replica's start or Redis's may take longer).
    private static func nominalLength(of fault: Fault) -> Duration {
        switch fault {
        case .redisPause(let length), .replicaKill(_, let length), .replicaStartDuringRedisPause(_, let length),
            .amodbRefusal(let length, _), .linkStall(_, let length), .linkRefuse(_, let length),
            .redisOlderSnapshot(let length), .burstKillFlush(_, let length), .replicaRestartedTwice(let length):
            length
        case .redisFlush, .redisRestart, .budgetKeyDeleted, .redisEviction: .zero
        }
    }

    /// A duration uniform in `seconds`, to the millisecond.
    private static func uniform(_ seconds: ClosedRange<Double>, _ generator: inout SplitMix64) -> Duration {
        let value = seconds.lowerBound + generator.unit() * (seconds.upperBound - seconds.lowerBound)
        return .milliseconds(Int(value * 1000))
    }
}
