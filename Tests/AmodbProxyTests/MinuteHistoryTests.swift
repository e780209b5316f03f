import Testing

@testable import AmodbProxy

/// The status page's history: the window is the last 60 seconds of samples, each minute of
/// the chart is what its samples added, and an hour is all it keeps.
struct MinuteHistoryTests {
    private func counts(calls: Int, fresh: Int = 0, refused: Int = 0) -> StatusCounts {
        StatusCounts(calls: calls, fresh: fresh, refused: refused)
    }

    @Test func theWindowIsTheLastSixtySecondsOfSamples() {
        var history = MinuteHistory(start: 6_000)
        for second in 1...90 { history.record(counts(calls: second), at: 6_000 + Double(second)) }
        // 90 calls by 6090; the window starts at 6030, when 30 had been made.
        #expect(history.window(counts(calls: 90), at: 6_090).calls == 60)
        // A reading taken between samples counts what came since the last one too.
        #expect(history.window(counts(calls: 95), at: 6_090.5).calls == 65)
    }

    @Test func aYoungHistoryCountsFromItsStart() {
        var history = MinuteHistory(start: 6_000, counts: counts(calls: 7))
        history.record(counts(calls: 9), at: 6_001)
        #expect(history.window(counts(calls: 12), at: 6_002).calls == 5)
    }

    @Test func eachMinuteHoldsWhatCameInIt() {
        var history = MinuteHistory(start: 6_000)  // 6000 is a minute's start (100 × 60)
        // 2 calls a second for the first minute, 1 a second for the next half minute.
        var total = 0
        for second in 1...90 {
            total += second <= 60 ? 2 : 1
            history.record(counts(calls: total, fresh: second), at: 6_000 + Double(second))
        }
        let minutes = history.minutes(counts(calls: total, fresh: 90), at: 6_090)
        #expect(minutes.map(\.start) == [6_000, 6_060])
        // The last sample before the second minute's first (at 6059) ends the first minute.
        #expect(minutes.map(\.counts.calls) == [118, 32])
        #expect(minutes.map(\.counts.fresh).reduce(0, +) == 90)
    }

    @Test func aMinuteWithNoSampleYetTakesWhatCameSinceTheLastOne() {
        var history = MinuteHistory(start: 6_000)
        history.record(counts(calls: 5), at: 6_030)
        let minutes = history.minutes(counts(calls: 8), at: 6_061)
        #expect(minutes.map(\.start) == [6_000, 6_060])
        #expect(minutes.map(\.counts.calls) == [5, 3])
    }

    @Test func anHourIsKeptAndNoMore() {
        var history = MinuteHistory(start: 0)
        for minute in 1...150 { history.record(counts(calls: minute, refused: 2 * minute), at: Double(minute * 60)) }
        let minutes = history.minutes(counts(calls: 150, refused: 300), at: 150 * 60 + 1)
        #expect(minutes.count == MinuteHistory.minutes)
        #expect(minutes.last?.start == 9_000.0)
        #expect(minutes.first?.start == 5_460.0)
        // One call and two refusals a minute, the current minute's sample included.
        #expect(minutes.allSatisfy { $0.counts.calls == 1 && $0.counts.refused == 2 }, "\(minutes)")
    }

    @Test func aSampleFromThePastIsIgnored() {
        var history = MinuteHistory(start: 6_000)
        history.record(counts(calls: 4), at: 6_010)
        history.record(counts(calls: 100), at: 6_005)
        #expect(history.window(counts(calls: 4), at: 6_010).calls == 4)
    }
}
