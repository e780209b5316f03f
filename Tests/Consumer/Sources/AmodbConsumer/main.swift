import AmodbClient
import AmodbModels
import Foundation

/// What an app's view model does with the client: compiled and linked by the check, never
/// called (the check needs no network).
func trendingTitles(from client: AmodbClient) async throws -> [String] {
    let page: TrendingPage = try await client.trending(.movie, .week, language: "de-DE")
    let movie: MovieDetails = try await client.movie(id: 550, appendToResponse: ["credits"])
    return page.results.map(\.displayName) + [movie.title]
}

let client = AmodbClient(baseURL: URL(string: "https://movies-proxy.example.com/3")!, bearerToken: "consumer-token")
// run.sh runs the binary and looks for this line: the libraries linked and the client works
// without a network (its description never shows the token).
print(client)
