import AmodbModels
import Testing

@Suite("A search's text in canonical form")
struct SearchRequestTests {
    typealias Query = [(name: String, value: String)]

    @Test(
        "Texts amodb answers alike have one canonical form",
        arguments: [
            ("  Star   WARS ", "star wars"),
            ("star wars", "star wars"),
            ("Star\tWars\n", "star wars"),
            ("AMÉLIE", "amélie"),
            ("ame\u{301}lie", "amélie"),
            ("Der Pate", "der pate"),
            ("千と千尋", "千と千尋"),
        ])
    func canonicalText(text: String, expected: String) throws {
        let request = try AmodbRequest(route: .searchMovie, query: [("query", text)])
        #expect(request.search == expected)
        #expect(try AmodbRequest.canonicalSearch(text) == expected)
    }

    @Test func equivalentSearchesAreOneRequest() throws {
        let first = try AmodbRequest(route: .searchMovie, query: [("query", "  Star   WARS "), ("page", "1")])
        let second = try AmodbRequest(route: .searchMovie, search: "star wars")
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first.pathAndQuery == second.pathAndQuery)
    }

    @Test(
        "Texts amodb would not search for are refused, saying why",
        arguments: [
            ([], "Invalid parameter: query is required."),
            ([("query", "")], "Invalid parameter: query must not be empty."),
            ([("query", "   \t ")], "Invalid parameter: query must not be empty."),
            ([("query", String(repeating: "a", count: 101))], "Invalid parameter: query must be at most 100 bytes."),
            ([("query", String(repeating: "é", count: 51))], "Invalid parameter: query must be at most 100 bytes."),
            ([("query", "star\u{0}wars")], "Invalid parameter: query must not hold control characters."),
            ([("query", "star\u{7}")], "Invalid parameter: query must not hold control characters."),
            ([("query", "\u{1B}[31m")], "Invalid parameter: query must not hold control characters."),
            ([("query", "a"), ("query", "b")], "Invalid parameter: query is given more than once."),
        ] as [(Query, String)])
    func refusedTexts(query: Query, message: String) {
        #expect {
            try AmodbRequest(route: .searchMovie, query: query)
        } throws: { error in
            guard let error = error as? RequestError, case .invalidValue(.query, _) = error else { return false }
            return error.description == message
        }
    }

    @Test func theLongestTextIsAHundredBytes() throws {
        let ascii = String(repeating: "a", count: AmodbRequest.maxSearchBytes)
        #expect(try AmodbRequest(route: .searchMovie, search: ascii).search == ascii)
        // 50 two-byte letters are 100 bytes: the limit is in bytes, not characters.
        let accented = String(repeating: "é", count: 50)
        #expect(try AmodbRequest(route: .searchMovie, search: accented).search == accented)
        // Spaces around the text do not count: they are not part of the search.
        #expect(try AmodbRequest(route: .searchMovie, search: "  " + ascii + "  ").search == ascii)
    }

    @Test(
        "A search's path and query carry its text percent-encoded",
        arguments: [
            ([("query", "amélie")], "/search/movie?query=am%C3%A9lie"),
            ([("query", "Ame\u{301}lie")], "/search/movie?query=am%C3%A9lie"),
            ([("query", "Star  Wars")], "/search/movie?query=star%20wars"),
            ([("query", "a+b&c=d/e?f#g")], "/search/movie?query=a%2Bb%26c%3Dd%2Fe%3Ff%23g"),
            ([("query", "-._~")], "/search/movie?query=-._~"),
            ([("query", "千")], "/search/movie?query=%E5%8D%83"),
            (
                [("page", "2"), ("query", "Amélie"), ("language", "fr-fr")],
                "/search/movie?language=fr-FR&page=2&query=am%C3%A9lie"
            ),
            ([("query", "alien"), ("append_to_response", "credits")], "/search/movie?query=alien"),
        ] as [(Query, String)])
    func pathAndQueryIsPercentEncoded(query: Query, expected: String) throws {
        #expect(try AmodbRequest(route: .searchMovie, query: query).pathAndQuery == expected)
    }

    @Test func onlyASearchTakesAText() throws {
        #expect(throws: RequestError.unsupportedParameter(.query)) {
            try AmodbRequest(route: .movieList(.popular), search: "alien")
        }
        #expect(try AmodbRequest(route: .movieList(.popular), query: [("query", "alien")]).search == nil)
    }
}
