import AmodbCompression
import AmodbModels
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// Each request lands in the series of its route, status and cache outcome, and each
/// answer's bytes in the series of its coding, whatever the status.
struct ProxyMetricsTests {
    @Test(arguments: [
        (200, "200"), (304, "304"), (505, "505"), (404, "404"), (406, "other"), (599, "other"), (100, "other"),
        (0, "other"),
        (-1, "other"), (600, "other"), (Int.max, "other"),
    ])
    func aStatusCountsInItsOwnSeriesOrInOther(status: Int, label: String) throws {
        let metrics = ProxyMetrics()
        metrics.recordRequest(route: .init(.movie), status: status, cache: .stale, seconds: 0.002)
        metrics.recordRequest(route: .init(.movie), status: status, cache: .stale, seconds: 0.002)
        let samples = try PrometheusSamples(metrics.render())
        #expect(
            try samples.value(
                "amodb_proxy_requests_total", ["route": "/3/movie/{movie_id}", "status": label, "cache": "stale"]) == 2)
        #expect(try samples.value("amodb_proxy_request_duration_seconds_count", ["route": "/3/movie/{movie_id}"]) == 2)
    }

    @Test func bytesCountInTheSeriesOfTheirCoding() throws {
        let metrics = ProxyMetrics()
        metrics.recordResponseBytes(100, encoding: .identity)
        metrics.recordResponseBytes(20, encoding: .gzip)
        metrics.recordResponseBytes(7, encoding: .br)
        metrics.recordResponseBytes(3, encoding: .br)
        let samples = try PrometheusSamples(metrics.render())
        for (coding, bytes) in [("identity", 100.0), ("gzip", 20), ("br", 10)] {
            #expect(try samples.value("amodb_proxy_response_bytes_total", ["encoding": coding]) == bytes)
        }
    }

    @Test func durationsLandInTheirBucketsAndTheCountIsTheirTotal() throws {
        let metrics = ProxyMetrics()
        // At a bound, between bounds, and above every bound (only +Inf holds it).
        for seconds in [0.0005, 0.003, 0.003, 42.0] {
            metrics.recordRequest(route: .init(.trending), status: 200, cache: .hit, seconds: seconds)
        }
        let samples = try PrometheusSamples(metrics.render())
        let route = ["route": "/3/trending/{media_type}/{time_window}"]
        func bucket(_ le: String) throws -> Double {
            try samples.value("amodb_proxy_request_duration_seconds_bucket", route.merging(["le": le]) { $1 })
        }
        #expect(try bucket("0.0005") == 1)
        #expect(try bucket("0.0025") == 1)
        #expect(try bucket("0.005") == 3)
        #expect(try bucket("10") == 3)
        #expect(try bucket("+Inf") == 4)
        #expect(try samples.value("amodb_proxy_request_duration_seconds_count", route) == 4)
        let sum = try samples.value("amodb_proxy_request_duration_seconds_sum", route)
        #expect(abs(sum - 42.0065) < 0.000_01)
    }

    @Test func countsFromEveryLaneAddUp() async {
        // Two loops, each the single writer of its lane, while other threads add to the
        // shared lane at the same time (an index past the lanes counts there too).
        let counters = AtomicCounters(count: 3, loopLanes: 2)
        await withTaskGroup(of: Void.self) { group in
            for loop in [0, 1] {
                group.addTask { for _ in 0..<10_000 { counters.add(1, 2, loop: loop) } }
            }
            for loop in [nil, nil, 7, -1] as [Int?] {
                group.addTask { for _ in 0..<10_000 { counters.add(1, loop: loop) } }
            }
        }
        #expect(counters.value(1) == 2 * 10_000 * 2 + 4 * 10_000)
        #expect(counters.value(0) == 0)
        #expect(counters.value(2) == 0)
    }

    @Test func aCounterIndexPastTheCountersStopsTheProcessBeforeItsMemoryIsTouched() async {
        await #expect(processExitsWith: .failure) {
            AtomicCounters(count: 3, loopLanes: 1).add(3, loop: 0)
        }
        await #expect(processExitsWith: .failure) {
            _ = AtomicCounters(count: 3).value(-1)
        }
    }

    @Test func eachRouteEventOfEachRouteKindHasACounterOfItsOwn() {
        let statistics = CacheStatistics(eventLoops: 1)
        let slots = CacheStatistics.RouteEvent.allCases.flatMap { event in Route.Kind.allCases.map { (event, $0) } }
        for (position, (event, kind)) in slots.enumerated() {
            for _ in 0...position { statistics.count(event, kind: kind) }
        }
        for (position, (event, kind)) in slots.enumerated() {
            #expect(statistics.value(event, kind: kind) == position + 1, "\(event) \(kind)")
        }
    }

    @Test func eachCacheStatisticHasACounterOfItsOwn() {
        let statistics = CacheStatistics(eventLoops: 1)
        for (position, counter) in CacheStatistics.Counter.allCases.enumerated() {
            for _ in 0...position { statistics.count(counter, loop: position % 2 == 0 ? 0 : nil) }
        }
        for (position, counter) in CacheStatistics.Counter.allCases.enumerated() {
            #expect(statistics.value(counter) == position + 1, "\(counter)")
        }
    }
}
