import AmodbHTTP

/// Everything about a sandbox that changes: counters, scripts and rate windows.
/// Lives inside the sandbox's `Mutex`; every method runs under that lock.
struct SandboxState: Sendable {
    /// A script for this path applies to every path that has none of its own.
    static let anyPath = "*"

    var requestCounts: [String: Int] = [:]
    var totalRequests = 0
    var received: [ReceivedRequest] = []
    /// Per path, the behaviours still to play, first one first.
    var scripts: [String: [ScriptedBehaviour]] = [:]
    /// Per accepted key, its sliding window.
    var windows: [String: RateWindow] = [:]
    /// While set, answers wait in `held` until the test releases them.
    var holding = false
    /// Answers decided but not yet sent, each a closure that sends it.
    var held: [@Sendable () -> Void] = []

    /// Counts a request received at `now` and keeps a copy (at most `limit` copies, the latest).
    mutating func record(_ request: HTTPRequest, at now: ContinuousClock.Instant, limit: Int) {
        requestCounts[request.path, default: 0] += 1
        totalRequests += 1
        guard limit > 0 else { return }
        if received.count >= limit { received.removeFirst(received.count - limit + 1) }
        received.append(ReceivedRequest(request, receivedAt: now))
    }

    /// Marks the request recorded last (the one being decided, under the same lock) as
    /// refused for being over the key's limit.
    mutating func markLastOverLimit() {
        guard !received.isEmpty else { return }
        received[received.count - 1].overLimit = true
    }

    /// Counts a call against a key's window.
    mutating func admit(key: String, limit: Int, at now: ContinuousClock.Instant) -> RateWindow.Admission {
        windows[key, default: RateWindow(limit: limit)].admit(at: now)
    }

    /// Appends a behaviour to a path's script; `times` of 0 or less adds nothing.
    mutating func script(_ path: String, _ behaviour: Behaviour, times: Int?) {
        if let times, times <= 0 { return }
        scripts[path, default: []].append(ScriptedBehaviour(behaviour: behaviour, remaining: times))
    }

    /// The behaviour the next answer on `path` plays, used up by one.
    mutating func nextBehaviour(for path: String) -> Behaviour? {
        let key = scripts[path]?.isEmpty == false ? path : Self.anyPath
        guard var queue = scripts[key], var first = queue.first else { return nil }
        if let remaining = first.remaining {
            if remaining <= 1 {
                queue.removeFirst()
            } else {
                first.remaining = remaining - 1
                queue[0] = first
            }
            scripts[key] = queue.isEmpty ? nil : queue
        }
        return first.behaviour
    }

    /// Forgets counts and recorded requests (scripts and windows stay).
    mutating func resetCounters() {
        requestCounts = [:]
        totalRequests = 0
        received = []
    }
}
