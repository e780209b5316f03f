import AmodbModels
import AmodbPlanner
import AmodbProxy
import AmodbTestSupport
import Testing

/// The synthetic trace the planner is tried on: fixed by its seed, and shaped as it says
/// (rate, the trending share, Zipf movies, languages leaning to English).
struct SyntheticTraceTests {
    @Test func oneSeedIsOneTraceAndAnotherSeedAnother() {
        let first = SyntheticTrace(rate: 20, duration: 300, seed: 7).requests()
        let again = SyntheticTrace(rate: 20, duration: 300, seed: 7).requests()
        let other = SyntheticTrace(rate: 20, duration: 300, seed: 8).requests()
        #expect(first.map(\.time) == again.map(\.time))
        #expect(first.map(\.request) == again.map(\.request))
        #expect(first.map(\.request) != other.map(\.request))
    }

    @Test func theSequenceOfTheGeneratorIsSplitMix64s() {
        // The first outputs for seed 1234567 of the reference C implementation.
        var random = SplitMix64(seed: 1_234_567)
        #expect(random.next() == 6_457_827_717_110_365_317)
        #expect(random.next() == 3_203_168_211_198_807_973)
        #expect(random.next() == 9_817_491_932_198_370_423)
    }

    @Test func theTraceHasTheShapeItIsGiven() {
        let trace = SyntheticTrace(rate: 50, duration: 2000, seed: 3)
        let requests = trace.requests()
        // Poisson: 100,000 expected, a standard deviation of about 316.
        #expect(abs(requests.count - 100_000) < 2_000)
        #expect(zip(requests, requests.dropFirst()).allSatisfy { $0.time <= $1.time })
        #expect(requests.allSatisfy { $0.time >= trace.start && $0.time < trace.start + trace.duration })

        let trending = requests.filter { if case .trending = $0.request.route { true } else { false } }
        #expect(abs(Double(trending.count) / Double(requests.count) - 0.25) < 0.01)
        #expect(Set(trending.map(\.request.pathAndQuery)).count == 8)
        #expect(trending.allSatisfy { $0.request.language == nil && $0.request.page == nil })

        var byRank: [Int: Int] = [:]
        var byLanguage: [String: Int] = [:]
        for request in requests {
            guard case .movie(let id) = request.request.route else { continue }
            byRank[id, default: 0] += 1
            byLanguage[request.request.language ?? "en-US", default: 0] += 1
        }
        let movies = Double(requests.count - trending.count)
        // Zipf(1) over 20,000 ranks: rank k has 1/(k·H) of the movies, H ≈ 10.48.
        #expect(abs(Double(byRank[1] ?? 0) / movies - 1 / 10.48) < 0.01)
        #expect(abs(Double(byRank[2] ?? 0) / movies - 1 / 20.96) < 0.01)
        #expect(byRank.keys.allSatisfy { (1...20_000).contains($0) })
        #expect(Set(byLanguage.keys) == ["en-US", "de-DE", "fr-FR", "es-ES", "ja-JP", "pt-BR"])
        #expect(abs(Double(byLanguage["en-US"] ?? 0) / movies - 0.55) < 0.01)
    }
}
