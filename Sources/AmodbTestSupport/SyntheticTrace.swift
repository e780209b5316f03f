package import AmodbModels
package import AmodbPlanner
package import AmodbProxy
import Foundation

/// An app's traffic, made up but shaped like it, for the planner: Poisson arrivals; a
/// share of requests for the 8 trending lists (page 1, the movie lists a little more
/// than the others) and the rest for movie details, the movie drawn from a Zipf law over
/// `movies` ranks and the language with a lean toward English. One seed, one trace: every
/// draw comes from `SplitMix64`, whose sequence, unlike the standard library's generators,
/// is fixed.
package struct SyntheticTrace: Sendable {
    /// Requests a second, on average.
    package var rate: Double
    /// Seconds the trace covers.
    package var duration: Double
    /// The seed of the one generator every draw comes from.
    package var seed: UInt64
    /// How many movies are asked for; the movie of rank k has id k.
    package var movies = 20_000
    /// The Zipf exponent of the movies' popularity: rank k is asked for in proportion to 1/k^s.
    package var zipfExponent = 1.0
    /// The share of requests for the trending lists.
    package var trendingShare = 0.25
    /// When the trace starts, in seconds since 1970 (2025-11-29T20:39:05Z).
    package var start = 1_764_448_745.0

    /// The languages movie details are asked in, and how often (`nil`: none, English).
    package static let languages: [(tag: String?, weight: Double)] = [
        (nil, 0.55), ("de-DE", 0.12), ("fr-FR", 0.10), ("es-ES", 0.10), ("ja-JP", 0.07), ("pt-BR", 0.06),
    ]

    /// The trending lists, and how often each is asked for.
    package static let trendingLists: [(route: Route, weight: Double)] = [
        (.trending(.movie, .day), 3), (.trending(.movie, .week), 3), (.trending(.all, .day), 2),
        (.trending(.all, .week), 2),
        (.trending(.tv, .day), 1.5), (.trending(.tv, .week), 1.5), (.trending(.person, .day), 1),
        (.trending(.person, .week), 1),
    ]

    /// A trace of `rate` requests a second for `duration` seconds from `seed`.
    package init(rate: Double, duration: Double, seed: UInt64) {
        self.rate = rate
        self.duration = duration
        self.seed = seed
    }

    /// The trace's requests, in time order.
    package func requests() -> [ReplayRequest] {
        var requests: [ReplayRequest] = []
        requests.reserveCapacity(Int(rate * duration * 1.01) + 16)
        generate { requests.append($0) }
        return requests
    }

    /// The trace as access-log lines in `format`, one per request, answered at once from the
    /// cache, written by the proxy's own line writer (`AccessLogLine`).
    package func accessLog(format: LogFormat = .json) -> [UInt8] {
        var bytes: [UInt8] = []
        generate { AccessLogLine.appendForwarded($0.request, at: $0.time, format: format, to: &bytes) }
        return bytes
    }

    /// Writes the trace's access-log lines to a new file at `path`, a megabyte at a time
    /// (a trace of a million lines is about 200 MB).
    package func writeAccessLog(to path: String, format: LogFormat = .json) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? file.close() }
        var bytes: [UInt8] = []
        var failure: (any Error)?
        generate { replayed in
            guard failure == nil else { return }
            AccessLogLine.appendForwarded(replayed.request, at: replayed.time, format: format, to: &bytes)
            if bytes.count >= 1 << 20 {
                do { try file.write(contentsOf: bytes) } catch { failure = error }
                bytes.removeAll(keepingCapacity: true)
            }
        }
        if let failure { throw failure }
        try file.write(contentsOf: bytes)
    }

    /// Draws the requests in time order and hands each to `body`.
    private func generate(_ body: (ReplayRequest) -> Void) {
        var random = SplitMix64(seed: seed)
        let movieRanks = Self.cumulative((1...max(1, movies)).map { 1 / pow(Double($0), zipfExponent) })
        let languageTable = Self.cumulative(Self.languages.map(\.weight))
        let trendingTable = Self.cumulative(Self.trendingLists.map(\.weight))
        let trending = Self.trendingLists.map { try! AmodbRequest(route: $0.route) }  // no parameter to refuse
        // Each (movie, language) request is built once: a trace asks for most of them many times.
        var movieRequests: [Int: AmodbRequest] = [:]
        var time = start
        let end = start + duration
        while true {
            // Exponential gaps between arrivals make a Poisson process.
            time += -log(1 - random.unit()) / rate
            guard time < end else { return }
            if random.unit() < trendingShare {
                body(ReplayRequest(time: time, request: trending[Self.draw(trendingTable, &random)]))
                continue
            }
            let rank = Self.draw(movieRanks, &random) + 1
            let language = Self.draw(languageTable, &random)
            let slot = rank * Self.languages.count + language
            if movieRequests[slot] == nil {
                // known tags
                movieRequests[slot] = try! AmodbRequest(route: .movie(id: rank), language: Self.languages[language].tag)
            }
            body(ReplayRequest(time: time, request: movieRequests[slot]!))
        }
    }

    /// Running sums of `weights`, the last being their total: a draw is a binary search.
    private static func cumulative(_ weights: [Double]) -> [Double] {
        var sum = 0.0
        return weights.map { weight in
            sum += weight
            return sum
        }
    }

    /// The index of the first running sum above a uniform draw over the total (inverse CDF).
    private static func draw(_ cumulative: [Double], _ random: inout SplitMix64) -> Int {
        let target = random.unit() * cumulative[cumulative.count - 1]
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] > target { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
