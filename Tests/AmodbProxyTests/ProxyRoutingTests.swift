import AmodbModels
import Testing

@testable import AmodbProxy

/// The responder reads a request's path once, as bytes: whether it is under `/3/` and
/// which forwarded route it names there.
struct ProxyRoutingTests {
    @Test(
        "Paths are placed under the API root or not, and routed there",
        arguments: [
            ("/3/movie/550", true, Route.movie(id: 550) as Route?),
            ("/3/trending/all/day", true, .trending(.all, .day)),
            ("/3/", true, nil), ("/3/movie/550/", true, nil), ("/3/tv/season", true, nil),
            ("/3/tv/1396", true, .tv(id: 1396)), ("/3//movie/550", true, nil),
            ("/3", false, nil), ("/30/movie/550", false, nil), ("/movie/550", false, nil), ("/healthz", false, nil),
            ("/4/movie/550", false, nil), ("", false, nil),
        ])
    func pathsAreRoutedUnderTheAPIRoot(path: String, underAPI: Bool, route: Route?) {
        let routed = RouteRequest.route(for: path)
        #expect(routed.underAPI == underAPI)
        #expect(routed.route == route)
    }
}
