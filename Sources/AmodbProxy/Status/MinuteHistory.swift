/// The last hour, minute by minute, and the last 60 seconds, from samples of cumulative
/// counts (`StatusCounts`) taken off the event loops: once a second by a timer, and once
/// more when the status is asked for. Nothing here runs on a request's path; a hit only
/// adds to the counters it added to before.
///
/// Two rings of samples: one per second (the budget's sliding 60-second window) and one
/// at each minute's start (the chart). A value type: its owner keeps it under a lock.
package struct MinuteHistory: Sendable {
    /// Minutes kept for the chart.
    static let minutes = 60
    /// Seconds the window spans, as amodb counts its limit.
    static let windowSeconds = 60

    /// One sample: when (seconds since 1970) and the counts then.
    struct Sample: Sendable, Equatable {
        var time: Double
        var counts: StatusCounts
    }

    /// One minute of the chart: its start (seconds since 1970, a multiple of 60) and what
    /// was counted in it (up to now, for the current minute).
    struct Minute: Sendable, Equatable {
        var start: Double
        var counts: StatusCounts
    }

    /// Samples of the last `windowSeconds` and one before, oldest first.
    private var seconds: [Sample] = []
    /// The counts at each minute's start, oldest first: `minutes` of them and the current one.
    private var minuteStarts: [Sample] = []

    /// A history that starts at `start` with `counts` (the counters' values then: zero for
    /// a proxy just built).
    init(start: Double, counts: StatusCounts = StatusCounts()) {
        seconds = [Sample(time: start, counts: counts)]
        minuteStarts = [Sample(time: Self.minuteStart(start), counts: counts)]
    }

    /// Adds a sample taken at `time`; samples come in time order (an earlier one is ignored).
    mutating func record(_ counts: StatusCounts, at time: Double) {
        guard let last = seconds.last, time >= last.time else { return }
        seconds.append(Sample(time: time, counts: counts))
        // Kept: every sample in the window, and the newest one before it (the window's base).
        let windowStart = time - Double(Self.windowSeconds)
        if let firstInside = seconds.firstIndex(where: { $0.time >= windowStart }), firstInside > 1 {
            seconds.removeFirst(firstInside - 1)
        }
        let minute = Self.minuteStart(time)
        if let current = minuteStarts.last, minute > current.time {
            // The counts at the first sample of a minute stand for its start: what came
            // between the last sample and the minute's start is counted in the new minute.
            minuteStarts.append(Sample(time: minute, counts: last.counts))
            if minuteStarts.count > Self.minutes + 1 { minuteStarts.removeFirst(minuteStarts.count - Self.minutes - 1) }
        }
    }

    /// What was counted in the last `windowSeconds` up to `counts` taken at `time` (since the
    /// history began, when it is younger than that).
    func window(_ counts: StatusCounts, at time: Double) -> StatusCounts {
        let windowStart = time - Double(Self.windowSeconds)
        let base = seconds.last(where: { $0.time <= windowStart }) ?? seconds.first!
        return counts.since(base.counts)
    }

    /// The minutes of the last hour that the history covers, oldest first; the last one is
    /// the current minute up to `counts` taken at `time`.
    func minutes(_ counts: StatusCounts, at time: Double) -> [Minute] {
        let current = Self.minuteStart(time)
        // No sample yet in the current minute (the timer has not run in it): the last
        // minute ends at the newest sample, and what came since is the current minute's.
        var ends = minuteStarts.dropFirst().map(\.counts)
        var starts = minuteStarts
        if let last = minuteStarts.last, current > last.time, let newest = seconds.last {
            ends.append(newest.counts)
            starts.append(Sample(time: current, counts: newest.counts))
        }
        ends.append(counts)
        let minutes = zip(starts, ends).map { Minute(start: $0.time, counts: $1.since($0.counts)) }
        return Array(minutes.suffix(Self.minutes))
    }

    /// The start of the minute `time` falls in.
    package static func minuteStart(_ time: Double) -> Double {
        (time / 60).rounded(.down) * 60
    }
}
