import AmodbModels
import Synchronization

/// The catalog's answers as JSON bytes, each encoded once and then reused: every
/// sandbox in the process answers the same request with the same bytes.
final class CatalogBodies: Sendable {
    /// The bodies of the standard catalog.
    static let standard = CatalogBodies(catalog: .standard)

    let catalog: SandboxCatalog
    /// Encoded bodies by what distinguishes them. Bounded: languages are reduced to
    /// the translated ones first, pages past the end are not kept, searches are not kept
    /// (any text is a new one, and a search of the catalog's titles is cheap), and beyond
    /// `memoCapacity` bodies (a movie has many combinations of sub-resources) new ones are
    /// encoded for each request instead.
    private let memo = Mutex<[Key: [UInt8]]>([:])

    /// The most bodies kept.
    static let memoCapacity = 4096

    private enum Key: Hashable {
        case trending(MediaType, TimeWindow, page: Int, language: String)
        /// `appended`: the request's canonical `append_to_response` names.
        case movie(id: Int, language: String, appended: [String])
        case configuration
        case movieList(MovieList, page: Int, language: String)
        case tv(id: Int, language: String)
        /// A person's details are the same in every language (no translated biographies).
        case person(id: Int)
        case movieGenres(language: String)
    }

    init(catalog: SandboxCatalog) {
        self.catalog = catalog
    }

    /// The JSON amodb sends for a request, or `nil` when the resource does not exist.
    func body(for request: AmodbRequest) throws -> [UInt8]? {
        let language = catalog.contentLanguage(for: request.language)
        switch request.route {
        case .trending(let media, let window):
            let page = request.page ?? 1
            let make = {
                try SandboxJSON.encode(self.catalog.trendingPage(media, window, page: page, language: language))
            }
            guard page * SandboxCatalog.pageSize <= SandboxCatalog.listLength else { return try make() }
            return try memoized(.trending(media, window, page: page, language: language), make)
        case .movie(let id):
            guard catalog.movies[id] != nil else { return nil }
            let names = request.appendToResponse
            return try memoized(.movie(id: id, language: language, appended: names)) {
                try SandboxJSON.encode(self.catalog.movieAnswer(id: id, language: language, appending: names))
            }
        case .configuration:
            return try memoized(.configuration) { try SandboxJSON.encode(SandboxCatalog.configuration) }
        case .movieList(let list):
            let page = request.page ?? 1
            let make = { try SandboxJSON.encode(self.catalog.moviePage(list, page: page, language: language)) }
            guard page * SandboxCatalog.pageSize <= SandboxCatalog.listLength else { return try make() }
            return try memoized(.movieList(list, page: page, language: language), make)
        case .tv(let id):
            guard catalog.shows[id] != nil else { return nil }
            return try memoized(.tv(id: id, language: language)) {
                try SandboxJSON.encode(self.catalog.tvDetails(id: id, language: language))
            }
        case .person(let id):
            guard catalog.people[id] != nil else { return nil }
            return try memoized(.person(id: id)) { try SandboxJSON.encode(self.catalog.personDetails(id: id)) }
        case .movieGenres:
            return try memoized(.movieGenres(language: language)) {
                try SandboxJSON.encode(self.catalog.genreList(language: language))
            }
        case .searchMovie:
            // `AmodbRequest` always holds a search's text for this route.
            return try SandboxJSON.encode(
                catalog.searchPage(request.search ?? "", page: request.page ?? 1, language: language))
        }
    }

    /// A stored body, or one made now (outside the lock) and stored.
    private func memoized(_ key: Key, _ make: () throws -> [UInt8]) rethrows -> [UInt8] {
        if let body = memo.withLock({ $0[key] }) { return body }
        let body = try make()
        memo.withLock { memo in
            if memo.count < Self.memoCapacity { memo[key] = body }
        }
        return body
    }
}
