import AmodbModels
import Testing

@Suite("Canonical requests")
struct AmodbRequestTests {
    typealias Query = [(name: String, value: String)]

    static func canonical(_ route: Route, _ query: Query) throws -> String {
        try AmodbRequest(route: route, query: query).pathAndQuery
    }

    @Test(
        "A key with parameters starts with its route's path, whatever the route and id",
        arguments: [
            Route.movie(id: 0), .movie(id: 7), .movie(id: 550), .movie(id: Int.max), .movie(id: -1),
            .movie(id: Int.min), .trending(.all, .day), .trending(.all, .week), .trending(.movie, .day),
            .trending(.movie, .week), .trending(.tv, .day), .trending(.tv, .week), .trending(.person, .day),
            .trending(.person, .week), .configuration,
        ])
    func keysStartWithTheRoutesPath(route: Route) throws {
        let language = route.parameters.contains(.language) ? "de-DE" : nil
        let appends = route.parameters.contains(.appendToResponse) ? ["credits"] : []
        let page = route.parameters.contains(.page) ? 3 : nil
        let request = try AmodbRequest(route: route, language: language, page: page, appendToResponse: appends)
        var expected = route.path
        var items: [String] = []
        if !appends.isEmpty { items.append("append_to_response=credits") }
        if language != nil { items.append("language=de-DE") }
        if page != nil { items.append("page=3") }
        if !items.isEmpty { expected += "?" + items.joined(separator: "&") }
        #expect(request.pathAndQuery == expected)
        #expect(route.path.hasPrefix("/"), "\(route.path)")
    }

    @Test(
        "Equivalent queries give the same pathAndQuery",
        arguments: [
            (
                Route.trending(.movie, .week), [("page", "2"), ("language", "de-DE")],
                "/trending/movie/week?language=de-DE&page=2"
            ),
            (
                .trending(.movie, .week), [("language", "de-DE"), ("page", "2")],
                "/trending/movie/week?language=de-DE&page=2"
            ),
            (.trending(.movie, .week), [("language", "EN-us")], "/trending/movie/week?language=en-US"),
            (.trending(.movie, .week), [("language", "pt-br")], "/trending/movie/week?language=pt-BR"),
            (.trending(.movie, .week), [("language", "zh-hant-tw")], "/trending/movie/week?language=zh-Hant-TW"),
            (.trending(.movie, .week), [("language", "DE")], "/trending/movie/week?language=de"),
            (.trending(.all, .day), [("page", "1")], "/trending/all/day"),
            (.trending(.all, .day), [], "/trending/all/day"),
            (.trending(.all, .day), [("page", "500")], "/trending/all/day?page=500"),
            (
                .movie(id: 550), [("append_to_response", "ratings,credits")],
                "/movie/550?append_to_response=credits,ratings"
            ),
            (
                .movie(id: 550), [("append_to_response", "credits,ratings,credits")],
                "/movie/550?append_to_response=credits,ratings"
            ),
            (
                .movie(id: 550), [("append_to_response", "watch/providers,images"), ("language", "fr-fr")],
                "/movie/550?append_to_response=images,watch/providers&language=fr-FR"
            ),
            (
                .movie(id: 550), [("api_key", "secret"), ("foo", "bar"), ("language", "de-DE")],
                "/movie/550?language=de-DE"
            ),
            (.movie(id: 550), [("page", "2")], "/movie/550"),
            (.trending(.tv, .week), [("append_to_response", "credits")], "/trending/tv/week"),
            (.trending(.tv, .week), [("Language", "de-DE"), ("callback", "x")], "/trending/tv/week"),
            // Names amodb does not know are dropped, as amodb ignores them (never forwarded).
            (
                .movie(id: 550),
                [("append_to_response", "videos,trailers,images,casts,translations,keywords,release_dates")],
                "/movie/550?append_to_response=images,keywords,release_dates,translations,videos"
            ),
            (.movie(id: 550), [("append_to_response", "credits,bogus")], "/movie/550?append_to_response=credits"),
            (.movie(id: 550), [("append_to_response", "Credits")], "/movie/550"),
            (.movie(id: 550), [("append_to_response", "casts,trailers")], "/movie/550"),
            (.movie(id: 550), [("append_to_response", "credits,")], "/movie/550?append_to_response=credits"),
            (
                .movie(id: 550), [("append_to_response", " videos , images ")],
                "/movie/550?append_to_response=images,videos"
            ),
            // Empty, or only commas and spaces: no append, the plain entry.
            (.movie(id: 550), [("append_to_response", "")], "/movie/550"),
            (.movie(id: 550), [("append_to_response", ",,,")], "/movie/550"),
            (.movie(id: 550), [("append_to_response", " , , ")], "/movie/550"),
            // An empty language is amodb's default.
            (.movie(id: 550), [("language", ""), ("append_to_response", "")], "/movie/550"),
            (.trending(.all, .day), [("language", ""), ("page", "2")], "/trending/all/day?page=2"),
            (
                .configuration,
                [("api_key", "secret"), ("language", "de-DE"), ("page", "2"), ("append_to_response", "credits")],
                "/configuration"
            ),
        ] as [(Route, Query, String)])
    func canonicalForm(route: Route, query: Query, expected: String) throws {
        #expect(try Self.canonical(route, query) == expected)
    }

    @Test func requestsInAnyOrderAreEqualAndHashAlike() throws {
        let a = try AmodbRequest(
            route: .movie(id: 550), query: [("language", "en-us"), ("append_to_response", "ratings,credits")])
        let b = try AmodbRequest(
            route: .movie(id: 550), query: [("append_to_response", "credits,ratings"), ("language", "EN-US")])
        let c = try AmodbRequest(
            route: .movie(id: 550), language: "en-US", appendToResponse: ["credits", "ratings", "credits"])
        #expect(a == b)
        #expect(b == c)
        #expect(Set([a, b, c]).count == 1)
        #expect(c.appendToResponse == ["credits", "ratings"])
        #expect(c.language == "en-US")
    }

    @Test func anEmptyAppendListIsTheSameRequestAsNone() throws {
        let plain = try AmodbRequest(route: .movie(id: 550), query: [])
        for value in ["", ",", " , ", "trailers,casts"] {
            let request = try AmodbRequest(route: .movie(id: 550), query: [("append_to_response", value)])
            #expect(request == plain, "\(value)")
            #expect(request.hashValue == plain.hashValue, "\(value)")
            #expect(request.pathAndQuery == "/movie/550", "\(value)")
        }
    }

    @Test func buildingInCodeFollowsTheSameRule() throws {
        let request = try AmodbRequest(
            route: .movie(id: 550), language: "", appendToResponse: ["videos", "bogus", "credits", "videos", ""])
        #expect(request.appendToResponse == ["credits", "videos"])
        #expect(request.language == nil)
        #expect(
            try AmodbRequest(route: .movie(id: 550), appendToResponse: ["trailers"])
                == AmodbRequest(route: .movie(id: 550)))
    }

    @Test func everyDocumentedSubResourceIsKept() throws {
        let names = [
            "alternative_titles", "changes", "credits", "external_ids", "images", "keywords", "lists", "ratings",
            "recommendations", "release_dates", "reviews", "similar", "translations", "videos", "watch/providers",
        ]
        let request = try AmodbRequest(
            route: .movie(id: 550), query: [("append_to_response", names.reversed().joined(separator: ","))])
        #expect(request.appendToResponse == names)
    }

    @Test func aListNamingEveryResourceTwiceKeepsEachOnce() {
        let names = AmodbRequest.appendableResources.sorted()
        let kept = AmodbRequest.appendedResources(names.reversed() + names + ["unknown", "credits "])
        #expect(kept == names)
        #expect(kept.count == AmodbRequest.maxAppendedResources)
        #expect(AmodbRequest.maxAppendedResources == 15)
    }

    @Test func pageOneIsStoredAsNoPage() throws {
        #expect(try AmodbRequest(route: .trending(.all, .day), page: 1).page == nil)
        #expect(try AmodbRequest(route: .trending(.all, .day), page: 1) == AmodbRequest(route: .trending(.all, .day)))
    }

    @Test(
        "Refused parameter values",
        arguments: [
            (Route.trending(.all, .day), [("page", "0")], QueryParameter.page),
            (.trending(.all, .day), [("page", "501")], .page),
            (.trending(.all, .day), [("page", "abc")], .page),
            (.trending(.all, .day), [("page", "-1")], .page),
            (.trending(.all, .day), [("page", "01")], .page),
            (.trending(.all, .day), [("page", "2.5")], .page),
            (.trending(.all, .day), [("page", "")], .page),
            (.trending(.all, .day), [("page", "2"), ("page", "3")], .page),
            (.trending(.all, .day), [("language", "de-DE"), ("language", "de-DE")], .language),
            (.trending(.all, .day), [("language", "de-DE"), ("language", "fr-FR")], .language),
            (.trending(.all, .day), [("language", "e")], .language),
            (.trending(.all, .day), [("language", "en_US")], .language),
            (.trending(.all, .day), [("language", "en-US!")], .language),
            (.trending(.all, .day), [("language", "en--US")], .language),
            (.trending(.all, .day), [("language", "1234")], .language),
            (.trending(.all, .day), [("language", "dé-DE")], .language),
            (.trending(.all, .day), [("language", "en-abcdefghi")], .language),
            (
                .movie(id: 550), [("append_to_response", "credits"), ("append_to_response", "images")],
                .appendToResponse
            ),
            (.movie(id: 550), [("language", ""), ("language", "de-DE")], .language),
        ] as [(Route, Query, QueryParameter)])
    func refusedValues(route: Route, query: Query, parameter: QueryParameter) {
        #expect {
            try AmodbRequest(route: route, query: query)
        } throws: { error in
            guard case .invalidValue(let refused, _) = error as? RequestError else { return false }
            return refused == parameter
        }
    }

    @Test(
        "Building in code refuses parameters the route does not take",
        arguments: [
            (Route.movie(id: 550), 2, [String](), QueryParameter.page),
            (.trending(.all, .day), nil, ["credits"], .appendToResponse),
        ] as [(Route, Int?, [String], QueryParameter)])
    func unsupportedParametersInCode(route: Route, page: Int?, append: [String], parameter: QueryParameter) {
        #expect(throws: RequestError.unsupportedParameter(parameter)) {
            try AmodbRequest(route: route, page: page, appendToResponse: append)
        }
    }

    @Test func errorsReadAsSentences() {
        #expect(
            RequestError.invalidValue(.page, "must be an integer from 1 to 500").description
                == "Invalid parameter: page must be an integer from 1 to 500.")
        #expect(
            RequestError.unsupportedParameter(.appendToResponse).description
                == "Invalid parameter: append_to_response is not accepted by this route.")
    }

    @Test(
        "Language tags normalize as amodb reads them",
        arguments: [
            ("EN-us", "en-US"), ("en", "en"), ("pt-br", "pt-BR"), ("zh-hant-tw", "zh-Hant-TW"),
            ("ES-419", "es-419"), ("sr-latn", "sr-Latn"), ("FIL", "fil"),
        ])
    func languageNormalization(tag: String, expected: String) throws {
        #expect(try AmodbRequest.normalizedLanguage(tag) == expected)
    }
}
