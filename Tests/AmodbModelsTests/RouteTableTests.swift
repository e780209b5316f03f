import AmodbModels
import Testing

@Suite("The route table's entries beyond trending, movie and configuration")
struct RouteTableTests {
    @Test(
        "Paths of the movie lists, tv, person, genres and search match",
        arguments: [
            ("/movie/popular", Route.movieList(.popular)),
            ("/movie/top_rated", .movieList(.topRated)),
            ("/movie/now_playing", .movieList(.nowPlaying)),
            ("/movie/upcoming", .movieList(.upcoming)),
            ("/tv/1399", .tv(id: 1399)),
            ("/tv/1", .tv(id: 1)),
            ("/tv/2147483647", .tv(id: 2_147_483_647)),
            ("/person/287", .person(id: 287)),
            ("/person/1", .person(id: 1)),
            ("/genre/movie/list", .movieGenres),
            ("/search/movie", .searchMovie),
        ])
    func newPathsMatch(path: String, route: Route) {
        #expect(Route(path: path) == route)
        #expect(route.path == path)
    }

    @Test(
        "Near misses of the new paths do not match",
        arguments: [
            // A list's name is exact; anything else after `/movie/` must be an id.
            "/movie/0550", "/movie/Popular", "/movie/top-rated", "/movie/topRated", "/movie/popular/",
            "/movie/popular/2", "/movie/now_playing/", "/movie/upcomin", "/movie/upcoming\u{301}",
            // Ids as a movie's: digits only, no sign, no leading zero, at most 2^31-1.
            "/tv/0", "/tv/-1", "/tv/01", "/tv/abc", "/tv/", "/tv", "/tv/1396/", "/tv/1396/credits", "/tv/2147483648",
            "/person/-1", "/person/0", "/person/", "/person/287/", "/person/+287", "/people/287", "/TV/1396",
            // Fixed paths, byte for byte.
            "/genre/movie/list/", "/genre/tv/list", "/genre/movie", "/genre/list", "/genre/Movie/list",
            "/search/movie/", "/search/tv", "/search", "/search/movies", "/search/movie?query=x", "/Search/movie",
        ])
    func nearMissesDoNotMatch(path: String) {
        #expect(Route(path: path) == nil)
    }

    @Test(
        "Every new route's path matches itself",
        arguments: MovieList.allCases.map { Route.movieList($0) } + [
            .tv(id: 1), .tv(id: 1396), .tv(id: Int(Int32.max)), .person(id: 1), .person(id: 287), .movieGenres,
            .searchMovie,
        ])
    func everyNewRouteRoundTrips(route: Route) {
        #expect(Route(path: route.path) == route)
    }

    @Test func anEntrysIndexIsItsKindsRawValue() {
        #expect(RouteTable.entries.count == Route.Kind.allCases.count)
        for index in RouteTable.entries.indices {
            #expect(RouteTable.entries[index].kind.rawValue == index, "\(RouteTable.entries[index].template)")
        }
    }

    @Test func routesOfEachKindAreOfThatKind() {
        #expect(Route.movieList(.popular).kind == .popular)
        #expect(Route.movieList(.topRated).kind == .topRated)
        #expect(Route.movieList(.nowPlaying).kind == .nowPlaying)
        #expect(Route.movieList(.upcoming).kind == .upcoming)
        #expect(Route.tv(id: 1396).kind == .tv)
        #expect(Route.person(id: 287).kind == .person)
        #expect(Route.movieGenres.kind == .movieGenres)
        #expect(Route.searchMovie.kind == .searchMovie)
    }

    @Test func theNewRoutesNameTheirTemplatesAndParameters() {
        #expect(Route.movieList(.nowPlaying).template == "/movie/now_playing")
        #expect(Route.movieList(.popular).parameters == [.language, .page])
        #expect(Route.tv(id: 1396).template == "/tv/{tv_id}")
        #expect(Route.tv(id: 1396).parameters == [.language])
        #expect(Route.person(id: 287).template == "/person/{person_id}")
        #expect(Route.person(id: 287).parameters == [.language])
        #expect(Route.movieGenres.template == "/genre/movie/list")
        #expect(Route.movieGenres.parameters == [.language])
        #expect(Route.searchMovie.template == "/search/movie")
        #expect(Set(Route.searchMovie.parameters) == [.query, .language, .page])
        #expect(Route.tv(id: 1396).id == 1396)
        #expect(Route.person(id: 287).id == 287)
        #expect(Route.movieGenres.id == nil)
    }

    @Test func eachNewRoutesAnswerShapeIsWhatItsOKHolds() {
        for list in MovieList.allCases {
            guard case .page = Route.movieList(list).entry.answer else {
                Issue.record("/movie/\(list.rawValue) is not checked as a page")
                continue
            }
        }
        guard case .details = Route.tv(id: 1).entry.answer, case .details = Route.person(id: 1).entry.answer,
            case .genres = Route.movieGenres.entry.answer, case .page = Route.searchMovie.entry.answer
        else {
            Issue.record("a new route's answer is not checked as the shape amodb sends")
            return
        }
    }

    @Test("A tv or person route's path is its prefix and the id in decimal", arguments: [1, 1396, 2_147_483_647])
    func tvAndPersonPathsAreTheIdInDecimal(id: Int) {
        #expect(Route.tv(id: id).path == "/tv/" + String(id))
        #expect(Route.person(id: id).path == "/person/" + String(id))
    }
}
