import AmodbModels
import Testing

@Suite("Matching paths to routes")
struct RouteTests {
    @Test(
        "Paths of the forwarded endpoints match",
        arguments: [
            ("/movie/550", Route.movie(id: 550)),
            ("/movie/1", .movie(id: 1)),
            ("/movie/2147483647", .movie(id: 2_147_483_647)),
            ("/trending/all/day", .trending(.all, .day)),
            ("/trending/movie/week", .trending(.movie, .week)),
            ("/trending/tv/day", .trending(.tv, .day)),
            ("/trending/person/week", .trending(.person, .week)),
            ("/configuration", .configuration),
        ])
    func validPathsMatch(path: String, route: Route) {
        #expect(Route(path: path) == route)
        #expect(route.path == path)
    }

    @Test(
        "A movie route's path is /movie/ and the id in decimal, whatever the id",
        arguments: [0, 1, 9, 10, 99, 100, 550, 999_999, 1_000_000, 2_147_483_647, Int.max, -1, -550, Int.min])
    func moviePathsAreTheIdInDecimal(id: Int) {
        #expect(Route.movie(id: id).path == "/movie/" + String(id))
    }

    @Test(
        "Anything else does not match",
        arguments: [
            "/movie/0", "/movie/-1", "/movie/01", "/movie/+5", "/movie/abc", "/movie/1e3", "/movie/ 550",
            "/movie/2147483648", "/movie/99999999999999999999", "/movie/550/credits", "/movie/550/",
            "/movie/", "/movie", "/MOVIE/550", "//movie/550", "movie/550",
            "/movie/550?language=de", "/trending/movie/month", "/trending/movie", "/trending/movie/week/",
            "/trending/films/week", "/trending/Movie/week", "/trending//week", "/trending", "/", "",
            // Matched on bytes: a combining mark, a look-alike digit or letter is another path.
            "/trending/movie/week\u{301}", "/trending/mo\u{301}vie/week", "/movie/\u{FF15}50",
            "/trending/\u{43C}ovie/week",
            "/movie/550\u{301}", "/trending/movie/weeks", "/trending/movies/week", "/trending/tv/", "/trending/all",
            "/configuration/", "/Configuration", "/configurations", "/configuration/images", "/configuratio",
            "//configuration",
        ])
    func invalidPathsDoNotMatch(path: String) {
        #expect(Route(path: path) == nil)
    }

    @Test(
        "Every route's path matches itself",
        arguments:
            MediaType.allCases.flatMap { media in TimeWindow.allCases.map { Route.trending(media, $0) } }
            + [.movie(id: 1), .movie(id: 550), .movie(id: Int(Int32.max)), .configuration])
    func everyRoundTrips(route: Route) {
        #expect(Route(path: route.path) == route)
    }

    @Test func routesNameTheirTemplateAndParameters() {
        #expect(Route.movie(id: 550).template == "/movie/{movie_id}")
        #expect(Route.trending(.tv, .day).template == "/trending/{media_type}/{time_window}")
        #expect(Route.movie(id: 550).parameters == [.language, .appendToResponse])
        #expect(Route.trending(.tv, .day).parameters == [.language, .page])
        #expect(Route.configuration.template == "/configuration")
        #expect(Route.configuration.parameters.isEmpty)
    }

    @Test("Each kind of route has its own counter slot, 0 up to the number of kinds, and its table entry")
    func routeKindsNumberTheirSlots() {
        #expect(Route.Kind.allCases.map(\.rawValue) == Array(0..<Route.Kind.allCases.count))
        for kind in Route.Kind.allCases {
            #expect(kind.entry.kind == kind)
        }
        #expect(Route.movie(id: 550).kind == .movie)
        #expect(Route.trending(.tv, .week).kind == .trending)
        #expect(Route.configuration.kind == .configuration)
    }
}
