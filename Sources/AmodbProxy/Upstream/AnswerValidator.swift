import AmodbModels
import Foundation

/// Decides whether an amodb 200 may be stored and served: it must decode as the route's
/// model (so a truncated or foreign body is an upstream error), and it must not hold
/// the key (whatever amodb, or a tampered snapshot, does).
struct AnswerValidator: Sendable {
    let key: Secret

    /// Why the body must not be served, or `nil` when it is fine.
    func problem(with body: [UInt8], for route: Route) -> String? {
        if body.contains(subsequence: Array(key.revealed.utf8)) { return "the body contains the API key" }
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

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the array (used to keep the key out of responses).
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        let first = needle[0]
        var index = 0
        let last = count - needle.count
        while index <= last {
            if self[index] == first, self[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
