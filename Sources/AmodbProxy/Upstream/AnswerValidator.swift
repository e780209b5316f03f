import AmodbModels
import Foundation

/// Decides whether an amodb 200 may be stored and served: it must decode as the route's
/// model (so a truncated or foreign body is an upstream error), and it must not hold
/// the key (whatever amodb, or a tampered snapshot, does).
struct AnswerValidator: Sendable {
    let key: Secret

    /// Why the body must not be served, or `nil` when it is fine.
    func problem(with body: [UInt8], for route: Route) -> String? {
        if ByteSearch.contains(body, key.revealed.utf8) { return "the body contains the API key" }
        let decoder = JSONDecoder()
        do {
            switch route {
            case .trending: _ = try decoder.decode(TrendingPage.self, from: Data(body))
            case .movie: _ = try decoder.decode(MovieDetails.self, from: Data(body))
            }
            return nil
        } catch {
            return "the body is not a valid \(route.template) answer"
        }
    }
}
