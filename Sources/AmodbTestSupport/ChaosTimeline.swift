package import Foundation
import Synchronization

/// What happened during a chaos run and when, as seconds since its start: the faults, as
/// they were played (a fault that had to wait for a replica to start is shown when it
/// really ended, not when the schedule said), for the report a failure prints.
package final class ChaosTimeline: Sendable {
    /// The instant every offset is measured from.
    package let start: ContinuousClock.Instant
    /// The same instant on the wall clock, which logs are stamped with.
    package let startDate: Date
    private let events = Mutex<[(instant: ContinuousClock.Instant, text: String)]>([])

    /// A timeline starting now.
    package init() {
        start = .now
        startDate = Date()
    }

    /// Records `text` as happening now.
    package func note(_ text: String) {
        let now = ContinuousClock.now
        events.withLock { $0.append((now, text)) }
    }

    /// Every event so far, oldest first, each as `+12.345 s  text`.
    package var lines: [String] {
        events.withLock { $0 }.sorted { $0.instant < $1.instant }.map { "\(offset($0.instant))  \($0.text)" }
    }

    /// The events between `from` and `to` (inclusive), oldest first, as `lines` shows them.
    package func lines(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> [String] {
        events.withLock { $0 }.filter { $0.instant >= from && $0.instant <= to }.sorted { $0.instant < $1.instant }
            .map { "\(offset($0.instant))  \($0.text)" }
    }

    /// `instant` as seconds since the start, to the millisecond: `+12.345 s` (or `-0.200 s`).
    package func offset(_ instant: ContinuousClock.Instant) -> String {
        let seconds = Self.seconds(instant - start)
        return (seconds < 0 ? "-" : "+") + String(format: "%.3f s", abs(seconds))
    }

    /// A duration as a report shows it, to the millisecond: `1.234 s`.
    package static func shown(_ duration: Duration) -> String {
        String(format: "%.3f s", seconds(duration))
    }

    /// A duration in seconds.
    package static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
