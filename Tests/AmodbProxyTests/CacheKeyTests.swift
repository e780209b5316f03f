import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CacheKeyTests {
    /// Each group of targets must share one entry (one upstream call, with this path).
    static let groups: [([String], String)] = [
        (
            [
                "/3/movie/550", "/3/movie/550?language=en-US", "/3/movie/550?language=EN-us",
                "/3/movie/550?language=de-AT",
                "/3/movie/550?language=xx", "/3/movie/550?language=en", "/3/movie/550?utm_source=ad&api_key=x",
            ],
            "/movie/550"
        ),
        (
            ["/3/movie/550?language=de", "/3/movie/550?language=DE-de", "/3/movie/550?language=de-DE&cb=123"],
            "/movie/550?language=de-DE"
        ),
        (
            ["/3/trending/all/day", "/3/trending/all/day?page=1", "/3/trending/all/day?page=1&language=en-US"],
            "/trending/all/day"
        ),
        (
            [
                "/3/movie/13?append_to_response=ratings,credits",
                "/3/movie/13?append_to_response=credits,ratings,credits&language=pt-br",
            ],
            "/movie/13?append_to_response=credits,ratings"
        ),
    ]

    @Test(arguments: 0..<4)
    func variantsShareOneEntry(_ index: Int) async throws {
        let (targets, expected) = Self.groups[index]
        let fetcher = ScriptedUpstream(
            fallback: .status(
                200, expected.hasPrefix("/movie") ? ScriptedUpstream.movieDetails : ScriptedUpstream.moviePage))
        let proxy = try ProxyHarness(fetcher: fetcher, clock: ManualClock())
        try await withServer(proxy) { _ async throws in
            for target in targets { #expect(try await proxy.get(target).status == 200, "\(target)") }
            if index == 3 {
                #expect(fetcher.calls == [expected, "/movie/13?append_to_response=credits,ratings&language=pt-BR"])
            } else {
                #expect(fetcher.calls == [expected])
            }
        }
    }
}
