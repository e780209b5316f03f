import AmodbModels
import Testing

@testable import AmodbProxy

/// The proxy reads a request's path and query on their bytes (`RouteRequest`) and writes its
/// cache key on bytes (`CacheKey`); AmodbModels reads and writes the same as strings, for
/// apps. The string readings are the oracle: on every path and query here, both give the
/// same route, the same request or the same error, and the same key.
struct RouteRequestTests {
    /// A route of each kind.
    static let examples: [Route] =
        MovieList.allCases.map(Route.movieList) + [
            .trending(.all, .day), .movie(id: 550), .configuration, .tv(id: 1396), .person(id: 287), .movieGenres,
            .searchMovie,
        ]

    @Test func theExamplesCoverEveryKindOfTheTable() {
        #expect(Set(Self.examples.map(\.kind)) == Set(Route.Kind.allCases))
        for (index, entry) in RouteTable.entries.enumerated() {
            #expect(entry.kind.rawValue == index, "an entry's place is its kind's raw value")
        }
    }

    /// Every route's path, and each of them with one byte changed, dropped or added at every
    /// place (a slash, a letter of either case, digits, a multi-byte character).
    static let paths: [String] = {
        let routes: [Route] =
            MediaType.allCases.flatMap { media in TimeWindow.allCases.map { Route.trending(media, $0) } }
            + [.movie(id: 1), .movie(id: 550), .movie(id: Int(Int32.max)), .configuration]
            + examples  // a route added one day is read here too
        let insertions = ["/", "a", "M", "0", "9", "é", ""]
        var paths = Set(
            routes.map(\.path) + [
                "", "/", "/movie/", "/movie/2147483648", "/movie/0550", "/trending//", "/tv/", "/person/0",
                "/genre/movie/list/", "/search/movie/x", "/movie/popular/1",
            ])
        for route in routes {
            let bytes = Array(route.path.utf8)
            for index in 0...bytes.count {
                for insertion in insertions {
                    let before = String(decoding: bytes[..<index], as: UTF8.self)
                    paths.insert(before + insertion + String(decoding: bytes[index...], as: UTF8.self))
                    if index < bytes.count {
                        paths.insert(before + insertion + String(decoding: bytes[(index + 1)...], as: UTF8.self))
                    }
                }
            }
        }
        return paths.sorted()
    }()

    @Test func pathsAreRoutedAsTheStringReadingRoutesThem() {
        var matched = 0
        for path in Self.paths {
            let routed = RouteRequest.route(pathBytes: path.utf8.span)
            #expect(routed == Route(path: path), "\(path.debugDescription)")
            if routed != nil { matched += 1 }
        }
        #expect(matched >= 22, "every route's own path matches")
        #expect(Self.paths.count > 1_000)
    }

    @Test(
        "A path's bytes within a longer path match as the same path alone",
        arguments: [
            ("/3/movie/550", Route.movie(id: 550) as Route?), ("/3/trending/tv/week", .trending(.tv, .week)),
            ("/3/movie/550/", nil), ("/3/trending/tv/weekly", nil), ("/3", nil), ("/3/configuration", .configuration),
        ])
    func bytesMatchInPlace(path: String, route: Route?) {
        let matched = RouteRequest.route(pathBytes: path.utf8.span.extracting(2...))
        #expect(matched == route)
        #expect(Route(path: String(path.dropFirst(2))) == route)
    }

    /// Query items that reach every branch of both readers: each parameter (and a name that
    /// is none, and one in the wrong case), with values valid, empty, out of range, malformed.
    static let items: [(name: String, value: String)] = {
        let names = ["language", "page", "append_to_response", "Language", "query"]
        let values = [
            "", "de", "DE", "pt-br", "en-US", "zh-hant-tw", "e", "1", "2", "500", "501", "01", "credits",
            " credits , videos,credits", "é", " Star  WARS ", "a\u{1}b", "e\u{301}", String(repeating: "x", count: 101),
        ]
        return names.flatMap { name in values.map { (name, $0) } }
    }()

    /// The byte reading of a query given as strings.
    static func byteReading(
        _ route: Route, _ query: [(name: String, value: String)], base: [String]?
    ) -> Result<AmodbRequest, RequestError> {
        Result { () throws(RequestError) in
            try RouteRequest.request(route, resolvingLanguageAmong: base) { (item) throws(RequestError) in
                for (name, value) in query { try item(name.utf8.span, value.utf8.span) }
            }
        }
    }

    /// The string reading: `AmodbRequest(route:query:)`, resolved among `base` when given.
    static func stringReading(
        _ route: Route, _ query: [(name: String, value: String)], base: [String]?
    ) -> Result<AmodbRequest, RequestError> {
        Result { () throws(RequestError) in
            let request = try AmodbRequest(route: route, query: query)
            return base.map { request.resolvingLanguage(among: $0) } ?? request
        }
    }

    @Test(arguments: [
        Route.trending(.movie, .week), .movie(id: 550), .configuration, .searchMovie, .movieList(.popular),
        .tv(id: 1), .movieGenres,
    ])
    func queriesAreReadAsTheStringReadingReadsThem(route: Route) {
        var valid = 0
        var keys = Set<String>()
        for base in [nil, AmodbLanguage.base] {
            let queries =
                [[]] + Self.items.map { [$0] } + Self.items.flatMap { first in Self.items.map { [first, $0] } }
            for query in queries {
                let bytes = Self.byteReading(route, query, base: base)
                let strings = Self.stringReading(route, query, base: base)
                switch (bytes, strings) {
                case (.success(let read), .success(let expected)):
                    #expect(read == expected, "\(query)")
                    // The key the proxy writes is the text apps' models make, and reads back as the request.
                    let key = CacheKey(read)
                    #expect(key.text == expected.pathAndQuery, "\(query)")
                    if keys.insert(key.text).inserted {
                        #expect(CacheKey.request(of: key.text) == read, "\(key.text)")
                    }
                    valid += 1
                case (.failure(let error), .failure(let expected)):
                    #expect(error == expected, "\(query)")
                default:
                    Issue.record("\(query): bytes \(bytes), strings \(strings)")
                }
            }
        }
        #expect(valid > (route == .searchMovie ? 30 : 100), "enough queries are valid to mean something")
        #expect(keys.count > (route.parameters.isEmpty ? 0 : 3))
    }

    @Test func aResolvedLanguageIsTheBaseListsOwnString() throws {
        let german = try Self.byteReading(.movie(id: 1), [("language", "DE")], base: AmodbLanguage.base).get()
        #expect(german.language == "de-DE")
    }

    @Test func appendedNamesAreABitSetInTheSortedOrder() {
        #expect(RouteRequest.appendableInOrder == AmodbRequest.appendableResources.sorted())
        let all = RouteRequest.appendableInOrder.joined(separator: " , ")
        let mask = RouteRequest.appendedMask(all.utf8.span)
        #expect(mask == (1 << RouteRequest.appendableInOrder.count) - 1)
        #expect(RouteRequest.appendedResources(mask: mask) == RouteRequest.appendableInOrder)
        let odd = ",, credits ,videos,credits,Videos,watch/providers,"
        #expect(
            RouteRequest.appendedResources(mask: RouteRequest.appendedMask(odd.utf8.span)) == [
                "credits", "videos", "watch/providers",
            ])
    }

    @Test(
        "Keys not in canonical form read back as no request",
        arguments: [
            "/movie/550?language=EN-us", "/movie/550?page=2", "/movie/550?page=01", "/movie/0550", "movie/550",
            "/movie/550?append_to_response=videos,credits", "/movie/550?", "/trending/all/day?page=1", "",
            "/search/movie", "/search/movie?query=Star%20Wars", "/search/movie?query=star+wars",
            "/search/movie?query=star%20wars&language=de-DE", "/tv/550?append_to_response=credits",
        ])
    func foreignKeysAreRefused(text: String) {
        #expect(CacheKey.request(of: text) == nil)
    }

    @Test func aKeyWithAnIdIsWrittenForEveryLengthOfId() throws {
        for id in [1, 9, 10, 99, 12_345, Int(Int32.max), Int.max, -1, Int.min] {
            for route in [Route.movie(id: id), .tv(id: id), .person(id: id)] {
                #expect(CacheKey(try AmodbRequest(route: route)).text == route.path)
                let request = try AmodbRequest(route: route, language: "de-DE", page: nil)
                #expect(CacheKey(request).text == route.path + "?language=de-DE")
            }
        }
    }

    /// A search's key holds its canonical text percent-encoded, one spelling for one text,
    /// and reads back as the same request.
    @Test func aSearchsKeyHoldsItsTextPercentEncoded() throws {
        let request = try AmodbRequest(route: .searchMovie, language: "de-DE", page: 2, search: "  Amélie  &  Co/ ")
        let key = CacheKey(request)
        #expect(key.text == "/search/movie?language=de-DE&page=2&query=am%C3%A9lie%20%26%20co%2F")
        #expect(key.text == request.pathAndQuery)
        #expect(CacheKey.request(of: key.text) == request)
        let decomposed = try AmodbRequest(route: .searchMovie, search: "AME\u{301}LIE")
        #expect(CacheKey(decomposed).text == "/search/movie?query=am%C3%A9lie", "composed: one text, one key")
    }

    /// The widest keys code can ask for (every parameter, the widest numbers) fit the room
    /// the key is written into, and read as the models write them.
    @Test func theWidestKeysAreWrittenWhole() {
        for route in [Route.movie(id: Int.min), .trending(.person, .week), .person(id: Int.min), .searchMovie] {
            let request = AmodbRequest(
                canonical: route, language: "zh-Hant-TW", page: Int.min,
                appendToResponse: RouteRequest.appendableInOrder,
                search: route == .searchMovie ? String(repeating: "\u{1F600}", count: 25) : nil)
            #expect(CacheKey(request).text == request.pathAndQuery)
        }
    }
}
