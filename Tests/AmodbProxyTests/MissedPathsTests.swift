import Testing

@testable import AmodbProxy

/// The paths that missed most: bounded, the hot paths found among many cold ones, counted exactly while tracked.
struct MissedPathsTests {
    @Test func countsEachPathAndListsTheMostMissedFirst() {
        let paths = MissedPaths(capacity: 10)
        for _ in 0..<3 { paths.record("/movie/550") }
        paths.record("/trending/movie/week")
        for _ in 0..<2 { paths.record("/movie/551") }
        #expect(
            paths.top(2) == [
                .init(path: "/movie/550", misses: 3, overestimate: 0),
                .init(path: "/movie/551", misses: 2, overestimate: 0),
            ])
    }

    @Test func keepsAtMostItsCapacityAndFindsTheHotPathsAmongManyColdOnes() {
        let paths = MissedPaths(capacity: 20)
        for round in 0..<500 {
            paths.record("/movie/\(1_000 + round)")  // each cold path misses once
            if round % 5 == 0 { paths.record("/trending/all/day") }
            if round % 10 == 0 { paths.record("/configuration") }
        }
        let top = paths.top(100)
        #expect(top.count == 20)
        #expect(top.prefix(2).map(\.path) == ["/trending/all/day", "/configuration"])
        // Tracked from their first misses on: exact.
        #expect(top[0].misses == 100 && top[0].overestimate == 0)
        #expect(top[1].misses == 50 && top[1].overestimate == 0)
    }

    @Test func aLongKeyIsTrackedByItsPrefix() {
        let paths = MissedPaths(capacity: 4)
        let long = "/movie/550?append_to_response=" + String(repeating: "x", count: 4_000)
        paths.record(long)
        paths.record(long + "y")
        #expect(paths.top(1).first?.path.utf8.count == MissedPaths.maxKeyBytes)
        #expect(paths.top(1).first?.misses == 2)
    }
}
