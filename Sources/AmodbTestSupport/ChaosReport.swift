package import AmodbSandbox
import Foundation

/// A chaos run judged: every call the stand-in amodb received, counted in sliding 60 s
/// windows against the key's limit, and every client request against what a client may
/// be answered. Its text says what a failure needs to be understood and replayed: the
/// seed, the busiest window with the calls in it, the requests answered wrongly, and the
/// faults as they were played.
package struct ChaosReport: Sendable {
    /// The window amodb's limit counts in.
    package static let window: Duration = .seconds(60)

    /// What the run was called, for the report's first line.
    package let name: String
    package let seed: UInt64
    /// The key's limit: calls to amodb in any 60 s window.
    package let limit: Int
    /// Every call amodb received, refused or not, oldest first.
    package let calls: [ReceivedRequest]
    /// The 60 s window that holds the most calls.
    package let busiest: BusiestWindow?
    /// Calls that found `limit` or more calls already in their 60 s window: each one is a
    /// call amodb would count over the limit.
    package let callsOverLimit: Int
    /// Every client request, in the order sent.
    package let requests: [ChaosRequest]
    /// The requests answered in a way a client must not be, each with what was wrong.
    package let violations: [(request: ChaosRequest, problem: String)]
    /// The requests that took longer than their deadline (they are violations too).
    package let hung: Int

    /// Judges `requests` (each given `deadline` seconds) and the `calls` amodb received.
    package init(
        name: String, seed: UInt64, limit: Int, calls: [ReceivedRequest], requests: [ChaosRequest], deadline: Double
    ) {
        self.name = name
        self.seed = seed
        self.limit = limit
        self.calls = calls.sorted { $0.receivedAt < $1.receivedAt }
        let instants = self.calls.map(\.receivedAt)
        busiest = BusiestWindow(of: instants, length: Self.window)
        var over = 0
        var first = 0
        for last in instants.indices {
            while instants[first] <= instants[last] - Self.window { first += 1 }
            if last - first + 1 > limit { over += 1 }
        }
        callsOverLimit = over
        self.requests = requests
        violations = requests.compactMap { request in request.violation(deadline: deadline).map { (request, $0) } }
        hung = requests.filter { $0.took > deadline }.count
    }

    /// The most calls in any 60 s window (0 for none).
    package var busiestCount: Int { busiest?.count ?? 0 }

    /// One paragraph for every run: the seed, the calls, the busiest window, the answers.
    package func summary(timeline: ChaosTimeline) -> String {
        var statuses: [String: Int] = [:]
        for request in requests {
            switch request.result {
            case .answered(let status, _, _): statuses["\(status)", default: 0] += 1
            case .failed: statuses["no response", default: 0] += 1
            }
        }
        let answers = statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        var text = "\(name): seed \(seed) (replay: CHAOS_SEED=\(seed))\n"
        text += "  amodb received \(calls.count) calls; the busiest 60 s window holds \(busiestCount) (limit \(limit))"
        if let busiest {
            text += ", from \(timeline.offset(calls[busiest.indices.lowerBound].receivedAt))"
            text += " to \(timeline.offset(calls[busiest.indices.upperBound].receivedAt))"
        }
        text += "; \(callsOverLimit) calls were over the limit in their window"
        text += ", \(calls.filter(\.overLimit).count) refused by amodb as over the limit\n"
        text += "  \(requests.count) client requests (\(answers)); \(violations.count) answered wrongly"
        text += ", \(hung) over their deadline, \(requests.filter { $0.excused != nil }.count) retried after a kill\n"
        return text
    }

    /// What a failure prints after the summary: the timeline of faults, the calls of the
    /// busiest window, and the first wrong answers.
    package func details(timeline: ChaosTimeline, violationsShown: Int = 30) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var text = "  timeline (seconds from the start of the run, \(formatter.string(from: timeline.startDate))):\n"
        for line in timeline.lines { text += "    \(line)\n" }
        if let busiest {
            text += "  the \(busiest.count) calls of the busiest 60 s window:\n"
            for call in calls[busiest.indices] {
                let refused = call.overLimit ? "  (429: over the limit)" : ""
                text += "    \(timeline.offset(call.receivedAt))  \(call.target)\(refused)\n"
            }
        }
        if !violations.isEmpty {
            text += "  wrong answers (first \(min(violationsShown, violations.count)) of \(violations.count)):\n"
            for (request, problem) in violations.prefix(violationsShown) {
                text += "    \(timeline.offset(request.started))  \(request.replica)  \(request.target)"
                text += " as \(request.client): \(problem)"
                if let excused = request.excused { text += " (retried: \(excused))" }
                text += "\n"
            }
        }
        return text
    }
}
