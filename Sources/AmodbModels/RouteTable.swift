/// Every amodb route the proxy can forward, one entry each: its path template, the query
/// parameters it takes, how long its answers are kept, how the key's budget treats it,
/// whether amodb's 404 for it is kept, what its 200 must look like, and whether it is
/// served without being turned on. Routing, the cache key, the 404 that lists what is
/// served, the metrics' route label, the validator, the planner and the docs' route table
/// are all read from here; adding a route is an entry here, the stand-in's answer for it
/// (`AmodbSandbox`), and a test.
public enum RouteTable {
    /// The entries, in `Route.Kind` order (an entry's index is its kind's `rawValue`),
    /// matched in this order; no path matches two (`/movie/popular` is never read as a
    /// movie's id: an id is digits only).
    public static let entries: [Entry] = [
        Entry(
            .trending, "/trending/{media_type}/{time_window}", name: "trending", byDefault: true,
            parameters: [.language, .page], lifetime: .list, budget: .refreshed, negativeCached: true,
            answer: .page, model: TrendingPage.self),
        Entry(
            .movie, "/movie/{movie_id}", name: "movie", byDefault: true,
            parameters: [.language, .appendToResponse], lifetime: .details, budget: .refreshed,
            negativeCached: true, answer: .details, model: MovieDetails.self),
        Entry(
            .configuration, "/configuration", name: "configuration", byDefault: true,
            parameters: [], lifetime: .reference, budget: .refreshed, negativeCached: true, answer: .configuration,
            model: APIConfiguration.self),
        Entry(
            .popular, "/movie/popular", name: "movie/popular", byDefault: false,
            parameters: [.language, .page], lifetime: .list, budget: .refreshed, negativeCached: false,
            answer: .page, model: MoviePage.self),
        Entry(
            .topRated, "/movie/top_rated", name: "movie/top_rated", byDefault: false,
            parameters: [.language, .page], lifetime: .list, budget: .refreshed, negativeCached: false,
            answer: .page, model: MoviePage.self),
        Entry(
            .nowPlaying, "/movie/now_playing", name: "movie/now_playing", byDefault: false,
            parameters: [.language, .page], lifetime: .list, budget: .refreshed, negativeCached: false,
            answer: .page, model: MoviePage.self),
        Entry(
            .upcoming, "/movie/upcoming", name: "movie/upcoming", byDefault: false,
            parameters: [.language, .page], lifetime: .list, budget: .refreshed, negativeCached: false,
            answer: .page, model: MoviePage.self),
        Entry(
            .tv, "/tv/{tv_id}", name: "tv", byDefault: false,
            parameters: [.language], lifetime: .details, budget: .refreshed, negativeCached: true,
            answer: .details, model: TVDetails.self),
        Entry(
            .person, "/person/{person_id}", name: "person", byDefault: false,
            parameters: [.language], lifetime: .details, budget: .refreshed, negativeCached: true,
            answer: .details, model: PersonDetails.self),
        Entry(
            .movieGenres, "/genre/movie/list", name: "genre/movie/list", byDefault: false,
            parameters: [.language], lifetime: .reference, budget: .refreshed, negativeCached: false,
            answer: .genres, model: GenreList.self),
        Entry(
            .searchMovie, "/search/movie", name: "search/movie", byDefault: false,
            parameters: [.query, .language, .page], lifetime: .list, budget: .missOnly, negativeCached: false,
            answer: .page, model: MoviePage.self),
    ]

    /// The entry an operator names (`AMODB_ROUTES`), if any.
    public static func entry(named name: String) -> Entry? {
        entries.first { $0.name == name }
    }

    /// The kinds served without being turned on.
    public static let servedByDefault: Set<Route.Kind> = Set(entries.filter(\.byDefault).map(\.kind))

    /// One route.
    public final class Entry: Sendable {
        public let kind: Route.Kind
        /// The path relative to the API root, with its placeholders: `/movie/{movie_id}`.
        public let template: String
        /// What an operator turns it on by, in `AMODB_ROUTES` (amodb's path without `/3/`
        /// and placeholders).
        public let name: String
        /// Served without being turned on: the key's budget is the operator's to spend, so a
        /// route beyond the ones apps need first is off until named.
        public let byDefault: Bool
        /// The query parameters it takes; any other is dropped.
        public let parameters: [QueryParameter]
        /// How long its answers are fresh: which setting says.
        public let lifetime: Lifetime
        /// How the key's budget treats its calls.
        public let budget: BudgetClass
        /// Whether amodb's 404 for it is kept (`AMODB_NEGATIVE_TTL`): for the routes with an
        /// id, which a client can make up; a list's 404 says something is wrong, and is not kept.
        public let negativeCached: Bool
        /// What a 200 of it must hold to be stored.
        public let answer: AnswerShape
        /// The shared model a 200 decodes as: the one the client returns for it (the proxy
        /// checks stored answers against it and reports drift, never refusing them).
        public let model: any (Decodable & Sendable).Type
        /// The template read into fixed bytes and placeholders, for matching paths.
        public let parts: [Part]

        init(
            _ kind: Route.Kind, _ template: String, name: String, byDefault: Bool, parameters: [QueryParameter],
            lifetime: Lifetime, budget: BudgetClass, negativeCached: Bool, answer: AnswerShape,
            model: any (Decodable & Sendable).Type
        ) {
            self.model = model
            self.kind = kind
            self.template = template
            self.name = name
            self.byDefault = byDefault
            self.parameters = parameters
            self.lifetime = lifetime
            self.budget = budget
            self.negativeCached = negativeCached
            self.answer = answer
            parts = Self.parts(of: template)
        }

        /// The path as the 404 that lists what is served names it, as apps write it:
        /// `/3/trending/{all|movie|tv|person}/{day|week}`, `/3/movie/{id} (a positive integer)`.
        public var served: String {
            var text = "/3"
            var hasID = false
            for part in parts {
                switch part {
                case .literal(let bytes): text += String(decoding: bytes, as: UTF8.self)
                case .placeholder(.id):
                    text += "{id}"
                    hasID = true
                case .placeholder(.mediaType):
                    text += "{" + MediaType.allCases.map(\.rawValue).joined(separator: "|") + "}"
                case .placeholder(.timeWindow):
                    text += "{" + TimeWindow.allCases.map(\.rawValue).joined(separator: "|") + "}"
                }
            }
            if parameters.contains(.query) { text += "?query={text}" }
            return hasID ? text + " (a positive integer)" : text
        }

        /// A template's fixed runs and placeholders: `{media_type}`, `{time_window}`, and
        /// `{…_id}` for an id.
        static func parts(of template: String) -> [Part] {
            var parts: [Part] = []
            var literal: [UInt8] = []
            var rest = Substring(template)
            while let open = rest.firstIndex(of: "{") {
                literal += Array(rest[..<open].utf8)
                let close = rest[open...].firstIndex(of: "}")!
                let name = rest[rest.index(after: open)..<close]
                if !literal.isEmpty { parts.append(.literal(literal)) }
                literal = []
                switch name {
                case "media_type": parts.append(.placeholder(.mediaType))
                case "time_window": parts.append(.placeholder(.timeWindow))
                default:
                    precondition(name.hasSuffix("_id"), "a template's placeholder is an id, a media type or a window")
                    parts.append(.placeholder(.id))
                }
                rest = rest[rest.index(after: close)...]
            }
            literal += Array(rest.utf8)
            if !literal.isEmpty { parts.append(.literal(literal)) }
            return parts
        }
    }

    /// A run of a template: fixed bytes, or a placeholder that takes one path segment.
    public enum Part: Sendable {
        case literal([UInt8])
        case placeholder(Placeholder)
    }

    /// What a placeholder takes.
    public enum Placeholder: Sendable {
        /// Digits only (no sign, no leading zero), 1 … 2^31-1.
        case id
        case mediaType
        case timeWindow
    }

    /// Which setting sets a route's lifetime.
    public enum Lifetime: Sendable, CaseIterable {
        /// Lists, which change within the hour: `AMODB_CACHE_TTL` (30 minutes by default).
        case list
        /// A title's or a person's details: `AMODB_MOVIE_TTL`.
        case details
        /// Reference data that hardly changes: `AMODB_CONFIGURATION_TTL`.
        case reference

        /// The setting's name.
        public var setting: String {
            switch self {
            case .list: "AMODB_CACHE_TTL"
            case .details: "AMODB_MOVIE_TTL"
            case .reference: "AMODB_CONFIGURATION_TTL"
            }
        }
    }

    /// How the key's budget treats a route's calls.
    public enum BudgetClass: String, Sendable {
        /// Filled on a miss, and refreshed from the window's slack while its stale answer is
        /// served (stale-while-revalidate).
        case refreshed
        /// Filled on a miss only: a stale answer is a miss, never refreshed in the background
        /// (a search is almost always asked once), and each client's misses of it take from
        /// a smaller share of its own (`AMODB_SEARCH_SHARE`) as well as its client share.
        case missOnly = "miss-only"
    }

    /// What a 200 must hold to be stored.
    public enum AnswerShape: Sendable {
        /// A page of a list: a `results` array.
        case page
        /// One title or person: its `id` is the path's.
        case details
        /// `/configuration`: an `images` object.
        case configuration
        /// A `genres` array.
        case genres
    }
}
