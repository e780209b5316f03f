import AmodbHTTP
import AmodbModels
import AmodbSandbox
import Foundation
import Testing

@Suite struct SearchTests {
    @Test(arguments: [
        ("fight%20club", 550), ("FIGHT+Club", 550), ("%20%20fight%20%20%20club%20", 550), ("dark%20knight", 155),
        ("inter", 157336), ("parasite", 496243), ("%EA%B8%B0%EC%83%9D%EC%B6%A9", 496243),  // 기생충
        ("%E5%8D%83%E3%81%A8%E5%8D%83%E5%B0%8B", 129),  // 千と千尋
    ])
    func aSearchFindsAFamousTitle(query: String, id: Int) async throws {
        let response = await get(AmodbSandbox(), "/3/search/movie?query=\(query)")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "public, max-age=1800")
        let page = try decode(MoviePage.self, response)
        #expect(page.page == 1)
        #expect(page.results.contains { $0.id == id })
        #expect(page.totalResults >= 1 && page.totalPages >= 1)
        #expect(page.dates == nil)
    }

    @Test func aSearchIsReadInCanonicalForm() async {
        let sandbox = AmodbSandbox()
        let plain = await get(sandbox, "/3/search/movie?query=fight%20club")
        let shouted = await get(sandbox, "/3/search/movie?query=%20FIGHT%20%20CLUB%20&page=1")
        #expect(plain.status == 200)
        #expect(plain.body == shouted.body)
    }

    @Test func aSearchMatchesTheTitleInTheRequestsLanguage() async throws {
        let sandbox = AmodbSandbox()
        let spanish = try decode(
            MoviePage.self, await get(sandbox, "/3/search/movie?query=caballero%20oscuro&language=es-ES"))
        #expect(spanish.results.map(\.id) == [155])
        #expect(spanish.results.first?.title == "El caballero oscuro")
        let english = try decode(MoviePage.self, await get(sandbox, "/3/search/movie?query=caballero%20oscuro"))
        #expect(english.results.isEmpty)
        // The English title still finds it, shown in the request's language.
        let byEnglishTitle = try decode(
            MoviePage.self, await get(sandbox, "/3/search/movie?query=the%20dark%20knight&language=es-ES"))
        #expect(byEnglishTitle.results.first { $0.id == 155 }?.title == "El caballero oscuro")
    }

    @Test func aSearchThatFindsNothingIsOnePageOfNothing() async throws {
        let response = await get(AmodbSandbox(), "/3/search/movie?query=no%20such%20film%20anywhere")
        #expect(response.status == 200)
        #expect(response.text == #"{"page":1,"results":[],"total_pages":1,"total_results":0}"#)
    }

    @Test func aBroadSearchIsPagedMostPopularFirst() async throws {
        let sandbox = unlimitedSandbox()
        let first = try decode(MoviePage.self, await get(sandbox, "/3/search/movie?query=the"))
        #expect(first.totalResults > 20, "a word in many titles")
        #expect(first.results.count == 20)
        #expect(first.totalPages == (first.totalResults + 19) / 20)
        var all = first.results
        for page in 2...first.totalPages {
            let next = try decode(MoviePage.self, await get(sandbox, "/3/search/movie?query=the&page=\(page)"))
            #expect(next.page == page)
            #expect(next.totalResults == first.totalResults)
            all += next.results
        }
        #expect(all.count == first.totalResults)
        #expect(Set(all.map(\.id)).count == all.count)
        for (earlier, later) in zip(all, all.dropFirst()) {
            #expect(earlier.popularity >= later.popularity)
        }
        for movie in all {
            #expect(movie.title.lowercased().contains("the") || movie.originalTitle.lowercased().contains("the"))
        }
        let past = try decode(
            MoviePage.self, await get(sandbox, "/3/search/movie?query=the&page=\(first.totalPages + 1)"))
        #expect(past.results.isEmpty)
        #expect(past.totalResults == first.totalResults && past.totalPages == first.totalPages)
    }

    @Test(arguments: [
        ("/3/search/movie", "query is required"), ("/3/search/movie?query=", "query must not be empty"),
        ("/3/search/movie?query=%20%20", "query must not be empty"),
        ("/3/search/movie?query=" + String(repeating: "a", count: 101), "query must be at most 100 bytes"),
        ("/3/search/movie?query=a&query=b", "query is given more than once"),
    ])
    func aSearchWithoutUsableTextIsRefused(target: String, problem: String) async throws {
        let response = await get(AmodbSandbox(), target)
        #expect(response.status == 400)
        let error = try decode(AmodbErrorBody.self, response)
        #expect(error.statusCode == 47)
        #expect(error.statusMessage.contains(problem))
    }
}
