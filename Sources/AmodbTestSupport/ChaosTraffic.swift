import Foundation

/// The clients of a chaos run: a few workers, each a thread sending one request at a time
/// to a random replica, as one of many client addresses (`X-Forwarded-For`, which the
/// replicas trust from loopback), until the run ends. Most requests are for warm paths
/// (the trending lists, popular movies); the rest are cold, each asked once.
///
/// What each worker asks, as whom and of which replica is drawn from the seed; when its
/// requests go out depends on how fast they are answered. Every request has a deadline,
/// and a request whose replica was killed under it (its connection refused, reset or cut)
/// is sent once more, to another replica (a lone replica's next life): a load balancer's retry.
package struct ChaosTraffic: Sendable {
    /// A path clients ask for, and whether amodb has it (a `404` is right only when not).
    package struct Path: Sendable, Equatable {
        package var target: String
        package var exists: Bool

        package init(_ target: String, exists: Bool = true) {
            self.target = target
            self.exists = exists
        }
    }

    /// Paths asked again and again: the first asks are misses, the rest hits.
    package var warm: [Path]
    /// Paths asked once each, in this order, shared out among the workers.
    package var cold: [Path]
    /// How many distinct client addresses send requests.
    package var clients: Int
    /// How many requests are in flight at most (one per worker).
    package var workers: Int
    /// The share of requests that are for cold paths, while there are any.
    package var coldShare: Double
    /// How long a request may take, in seconds: longer counts as hung.
    package var deadline: Double
    /// Seconds a worker waits between its requests.
    package var thinkTime: ClosedRange<Double>

    /// Clients that send `warm` and `cold`; every other setting has a default for a chaos run.
    package init(
        warm: [Path], cold: [Path], clients: Int = 48, workers: Int = 8, coldShare: Double = 0.4,
        deadline: Double = 15, thinkTime: ClosedRange<Double> = 0.02...0.4
    ) {
        precondition(!warm.isEmpty && clients > 0 && workers > 0, "a chaos run needs warm paths, clients and workers")
        self.warm = warm
        self.cold = cold
        self.clients = clients
        self.workers = workers
        self.coldShare = coldShare
        self.deadline = deadline
        self.thinkTime = thinkTime
    }

    /// Sends requests to `replicas` from now for `length`, with draws from `seed`, and
    /// returns every request once all are answered or past their deadline.
    package func run(seed: UInt64, for length: Duration, replicas: [ProxyReplica]) async throws -> [ChaosRequest] {
        precondition(!replicas.isEmpty, "no replica to send to")
        let end = ContinuousClock.now + length
        return try await withThrowingTaskGroup(of: [ChaosRequest].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    // Threads of their own: the sockets block, and the concurrency pool is the
                    // test's (and the stand-in amodb's, which runs in this process).
                    try await offloaded { self.work(worker, seed: seed, until: end, replicas: replicas) }
                }
            }
            var requests: [ChaosRequest] = []
            for try await done in group { requests += done }
            return requests.sorted { $0.started < $1.started }
        }
    }

    /// One worker's requests, one at a time until `end`.
    private func work(_ worker: Int, seed: UInt64, until end: ContinuousClock.Instant, replicas: [ProxyReplica])
        -> [ChaosRequest]
    {
        var generator = SplitMix64(seed: seed &+ UInt64(worker + 1) &* 0xD1B5_4A32_D192_ED03)
        // The worker's part of the cold paths: the seed alone decides who asks what.
        var cold = stride(from: worker, to: cold.count, by: workers).map { self.cold[$0] }[...]
        var requests: [ChaosRequest] = []
        while ContinuousClock.now < end {
            let number = generator.below(clients)
            let client = "10.77.\(number / 250).\(1 + number % 250)"
            let wantsCold = generator.unit() < coldShare
            let path = (wantsCold ? cold.popFirst() : nil) ?? warm[generator.below(warm.count)]
            let preferred = generator.below(replicas.count)
            requests.append(send(path, as: client, preferring: preferred, among: replicas))
            let pause = thinkTime.lowerBound + generator.unit() * (thinkTime.upperBound - thinkTime.lowerBound)
            Thread.sleep(forTimeInterval: pause)
        }
        return requests
    }

    /// One request, sent again once to another replica if its replica was killed under it.
    private func send(_ path: Path, as client: String, preferring preferred: Int, among replicas: [ProxyReplica])
        -> ChaosRequest
    {
        let started = ContinuousClock.now
        var request = ChaosRequest(
            target: path.target, client: client, exists: path.exists, replica: "none", started: started,
            sent: started, finished: started, result: .failed("no replica was up"))
        guard let (index, endpoint) = pick(preferred, excluding: nil, among: replicas, from: started) else {
            return request
        }
        request.replica = replicas[index].name
        request.sent = .now
        request.result = exchange(path.target, as: client, port: endpoint.port)
        request.finished = .now
        guard case .failed(let reason) = request.result, replicas[index].generation != endpoint.generation else {
            return request
        }
        // Killed under it: what a client of a dead replica sees, excused once.
        request.excused = "\(replicas[index].name) was killed under it (\(reason))"
        // Another replica, as a load balancer would pick; a lone replica's next life, once it listens.
        let excluded = replicas.count > 1 ? index : nil
        guard let (other, retry) = pick(preferred, excluding: excluded, among: replicas, from: .now) else {
            request.result = .failed("no other replica was up for the retry")
            return request
        }
        request.replica = replicas[other].name
        request.sent = .now
        request.result = exchange(path.target, as: client, port: retry.port)
        request.finished = .now
        if case .failed(let reason) = request.result, replicas[other].generation != retry.generation {
            // The retry's replica was killed under it too: a client can do no better.
            request.excused! += ", then \(replicas[other].name) under the retry (\(reason))"
            request.killedUnderTheRetry = true
        }
        return request
    }

    /// The first replica up from `preferred` on (not `excluded`), waiting up to a request's
    /// deadline for one: a restart in progress may have left none up. A lone replica's next
    /// life comes only after the kill is reaped and the new process has started, which on a
    /// machine busy with other work has taken over 5 s; a client keeps retrying as long as
    /// it would wait for an answer.
    private func pick(
        _ preferred: Int, excluding excluded: Int?, among replicas: [ProxyReplica], from start: ContinuousClock.Instant
    ) -> (Int, ProxyReplica.Endpoint)? {
        let giveUp = start + .seconds(deadline)
        repeat {
            for step in 0..<replicas.count {
                let index = (preferred + step) % replicas.count
                if index != excluded, let endpoint = replicas[index].endpoint { return (index, endpoint) }
            }
            Thread.sleep(forTimeInterval: 0.02)
        } while ContinuousClock.now < giveUp
        return nil
    }

    /// One exchange on a connection of its own, given up after `deadline`.
    private func exchange(_ target: String, as client: String, port: Int) -> ChaosRequest.Result {
        do {
            let connection = try RawHTTPConnection(port: port, timeout: deadline)
            defer { connection.close() }
            try connection.send(
                "GET \(target) HTTP/1.1\r\nHost: amodb-proxy.test\r\nX-Forwarded-For: \(client)\r\n"
                    + "Connection: close\r\n\r\n")
            guard let response = try connection.readResponse() else {
                return .failed("the connection closed before any response")
            }
            return .answered(
                status: response.status, retryAfter: response.header("Retry-After"),
                cacheStatus: response.header("Cache-Status"))
        } catch {
            return .failed("\(error)")
        }
    }
}

/// One client request of a chaos run and how it was answered.
package struct ChaosRequest: Sendable {
    /// What the client got.
    package enum Result: Sendable, Equatable {
        /// A response with this status and these fields.
        case answered(status: Int, retryAfter: String?, cacheStatus: String?)
        /// No response: the reason.
        case failed(String)
    }

    package var target: String
    /// The client address it was sent as.
    package var client: String
    /// Whether amodb has the path.
    package var exists: Bool
    /// The replica that answered (the retry's, after an excused failure).
    package var replica: String
    package var started: ContinuousClock.Instant
    /// When its last attempt was sent: after any wait for a replica to be up, which is a
    /// restart's time and not the proxy's.
    package var sent: ContinuousClock.Instant
    /// When the last attempt ended.
    package var finished: ContinuousClock.Instant
    package var result: Result
    /// Why the first attempt failed, when its replica was killed under it and it was retried.
    package var excused: String?
    /// Whether the retry's replica was killed under it as well (its failure is excused too).
    package var killedUnderTheRetry = false

    /// How long its last attempt took, in seconds.
    package var took: Double {
        ChaosTimeline.seconds(finished - sent)
    }

    /// What is wrong with how it was answered, or nil: a status other than 200 (404 for a
    /// path amodb does not have), 429 or 503 with `Retry-After`; no response (unless the
    /// replicas of both attempts were killed under them); or an attempt that took longer
    /// than `deadline` seconds.
    package func violation(deadline: Double) -> String? {
        if took > deadline { return "took \(took) s, over the deadline of \(deadline) s" }
        switch result {
        case .failed where killedUnderTheRetry:
            return nil
        case .failed(let reason):
            return "no response: \(reason)"
        case .answered(200, _, _):
            return nil
        case .answered(404, _, _) where !exists:
            return nil
        case .answered(let status, let retryAfter?, _) where status == 429 || status == 503:
            return Int(retryAfter).map { $0 >= 0 } == true ? nil : "\(status) with Retry-After \(retryAfter)"
        case .answered(let status, _, let cacheStatus):
            return "\(status) (Cache-Status: \(cacheStatus ?? "none"))"
        }
    }
}
