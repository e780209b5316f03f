import Foundation

/// A validated call to one of the forwarded endpoints: the route plus its known parameters,
/// in canonical form. Two requests that amodb would answer alike compare equal and
/// have the same `pathAndQuery`, which is what the proxy caches under and forwards.
public struct AmodbRequest: Sendable, Hashable {
    /// The lowest and highest `page` amodb accepts.
    public static let pageRange = 1...500

    /// The sub-resources amodb documents for `append_to_response` on `/movie/{id}`: the only
    /// names the proxy forwards.
    public static let appendableResources: Set<String> = [
        "alternative_titles", "changes", "credits", "external_ids", "images", "keywords",
        "lists", "ratings", "recommendations", "release_dates", "reviews", "similar",
        "translations", "videos", "watch/providers",
    ]

    /// The most names one `append_to_response` keeps: each documented name once.
    public static let maxAppendedResources = appendableResources.count

    public let route: Route
    /// A normalized language tag (`en-US`), or `nil` for amodb's default.
    public private(set) var language: String?
    /// The page, 2…500; page 1 is the same list as no page and is stored as `nil`.
    public let page: Int?
    /// Sorted and without duplicates.
    public let appendToResponse: [String]
    /// A search's text (`query`) in canonical form (`canonicalSearch`): only, and always, for
    /// a route that takes it.
    public let search: String?

    /// The most bytes a search's canonical text takes: longer ones are refused, not cut (a
    /// cut text would be another search).
    public static let maxSearchBytes = 100

    /// Builds a request, checking and normalizing each parameter. An empty `language` is no
    /// language; `appendToResponse` keeps only the names amodb knows (`appendedResources`).
    public init(
        route: Route, language: String? = nil, page: Int? = nil, appendToResponse: [String] = [],
        search: String? = nil
    ) throws(RequestError) {
        if language != nil, !route.parameters.contains(.language) { throw .unsupportedParameter(.language) }
        if search != nil, !route.parameters.contains(.query) { throw .unsupportedParameter(.query) }
        if page != nil, !route.parameters.contains(.page) { throw .unsupportedParameter(.page) }
        if !appendToResponse.isEmpty, !route.parameters.contains(.appendToResponse) {
            throw .unsupportedParameter(.appendToResponse)
        }
        self.route = route
        // Wrappers send `language=` for amodb's default: the same request as none.
        self.language = try language.flatMap { (tag) throws(RequestError) in
            tag.isEmpty ? nil : try Self.normalizedLanguage(tag)
        }
        if let page {
            guard Self.pageRange.contains(page) else { throw .invalidValue(.page, "must be an integer from 1 to 500") }
            self.page = page == 1 ? nil : page
        } else {
            self.page = nil
        }
        self.appendToResponse = appendToResponse.isEmpty ? [] : Self.appendedResources(appendToResponse)
        if route.parameters.contains(.query) {
            guard let search else { throw .invalidValue(.query, "is required") }
            self.search = try Self.canonicalSearch(search)
        } else {
            self.search = nil
        }
    }

    /// A search's text as it is forwarded and cached: Unicode's canonical composition,
    /// whitespace around it dropped and each run of it inside one space, lower case; refused
    /// when it is empty, holds a control character, or takes more than `maxSearchBytes`.
    /// Searches amodb answers alike (`Star  Wars `, `star wars`) share one entry and one call.
    public static func canonicalSearch(_ text: String) throws(RequestError) -> String {
        var words: [Substring] = []
        for scalar in text.unicodeScalars where scalar.properties.generalCategory == .control {
            guard scalar.properties.isWhitespace else {
                throw .invalidValue(.query, "must not hold control characters")
            }
        }
        for word in text.split(whereSeparator: { $0.isWhitespace }) { words.append(word) }
        let canonical = words.joined(separator: " ").lowercased().precomposedStringWithCanonicalMapping
        guard !canonical.isEmpty else { throw .invalidValue(.query, "must not be empty") }
        guard canonical.utf8.count <= maxSearchBytes else {
            throw .invalidValue(.query, "must be at most \(maxSearchBytes) bytes")
        }
        return canonical
    }

    /// A query value as a URL carries it: unreserved bytes (letters, digits, `-._~`) as they
    /// are, every other byte as `%XX` (upper-case hex), so that one text has one spelling.
    public static func percentEncoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            let unreserved =
                (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The names of an `append_to_response` list as they are forwarded and cached: those in
    /// `appendableResources`, without spaces around them, each once, sorted (so at most
    /// `maxAppendedResources`).
    ///
    /// amodb ignores names it does not know, so they are dropped rather than refused (TMDB
    /// libraries send `trailers` or `casts` by default); and they are never forwarded, or any
    /// client could split one movie's cache entry into as many as it likes. An empty list, or
    /// one of only commas and spaces, names nothing: the plain movie.
    public static func appendedResources(_ names: some Sequence<some StringProtocol>) -> [String] {
        var found = Set<String>()
        for name in names {
            var trimmed = Substring(name)
            while trimmed.first == " " { trimmed.removeFirst() }
            while trimmed.last == " " { trimmed.removeLast() }
            let resource = String(trimmed)
            if appendableResources.contains(resource) { found.insert(resource) }
        }
        return found.sorted()
    }

    /// Builds a request from a route and the query's (decoded) name–value pairs.
    /// Parameters the route does not know are dropped; a known one given twice, or a `page`
    /// empty or out of range, is an error. An empty `language` or `append_to_response` is
    /// the same as none. Errors come in one order whatever the items' order: a parameter
    /// given twice at once, then an empty or non-numeric page, the language, the page's range.
    ///
    /// The proxy reads a request's query from its bytes instead (`RouteRequest` in
    /// AmodbProxy); this reading is its test oracle, and the two agree on every query.
    public init(route: Route, query: [(name: String, value: String)]) throws(RequestError) {
        var seen: Set<QueryParameter> = []
        var language: Result<String?, RequestError> = .success(nil)
        var page: Int?
        var pageError: RequestError?
        var appended: [String] = []
        var search: String?
        for (name, value) in query {
            guard let parameter = QueryParameter.allCases.first(where: { $0.rawValue.utf8.elementsEqual(name.utf8) }),
                route.parameters.contains(parameter)
            else { continue }
            guard seen.insert(parameter).inserted else { throw .invalidValue(parameter, "is given more than once") }
            switch parameter {
            case .language:
                // Wrappers send `language=` for amodb's default: the same request as none.
                if !value.isEmpty {
                    language = Result { () throws(RequestError) in try Self.normalizedLanguage(value) }
                }
            case .page:
                if value.isEmpty {
                    pageError = .invalidValue(.page, "is empty")
                } else if let number = Route.positiveInteger(value.utf8) {
                    page = number
                } else {
                    pageError = .invalidValue(.page, "must be an integer from 1 to 500")
                }
            case .appendToResponse:
                appended = Self.appendedResources(value.split(separator: ",", omittingEmptySubsequences: false))
            case .query:
                search = value
            }
        }
        if let pageError { throw pageError }
        try self.init(
            route: route, language: try language.get(), page: page, appendToResponse: appended, search: search)
    }

    /// A request whose parts a reader has already checked and put in canonical form, as
    /// `init(route:query:)` would (a normalized or resolved language, no page 1, the names
    /// `appendedResources` keeps): the proxy's reader of a request's bytes, which is tested
    /// to agree with that initializer, builds its requests here without checking them twice.
    package init(
        canonical route: Route, language: String?, page: Int?, appendToResponse: [String], search: String? = nil
    ) {
        self.route = route
        self.language = language
        self.page = page
        self.appendToResponse = appendToResponse
        self.search = search
    }

    /// The same request with its language resolved to the base language amodb answers it
    /// in (`de` → `de-DE`), and left out when that is amodb's default (`en-US`, `de-AT`,
    /// `xx` or none all read as no language), so that requests amodb answers alike share
    /// one cache entry and one upstream path.
    public func resolvingLanguage(among base: [String] = AmodbLanguage.base) -> AmodbRequest {
        var resolved = self
        let language = AmodbLanguage.resolve(language, among: base)
        resolved.language = language == AmodbLanguage.fallback ? nil : language
        return resolved
    }

    /// The canonical query items, sorted by name, each value as a URL carries it (a
    /// search's text percent-encoded, `percentEncoded`; no other value needs it).
    public var queryItems: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if !appendToResponse.isEmpty {
            items.append((QueryParameter.appendToResponse.rawValue, appendToResponse.joined(separator: ",")))
        }
        if let language { items.append((QueryParameter.language.rawValue, language)) }
        if let page { items.append((QueryParameter.page.rawValue, String(page))) }
        if let search { items.append((QueryParameter.query.rawValue, Self.percentEncoded(search))) }
        return items
    }

    /// Path and canonical query relative to the API root, e.g. `/movie/550?language=de-DE`.
    /// Every value is as a URL carries it (`queryItems`). The proxy
    /// caches under this text, written from the request's parts by its `CacheKey`.
    public var pathAndQuery: String {
        var text = route.path
        var separator = "?"
        for (name, value) in queryItems {
            text += separator + name + "=" + value
            separator = "&"
        }
        return text
    }

    /// Normalizes a BCP 47 language tag the way amodb reads it: `EN-us` → `en-US`,
    /// `pt-br` → `pt-BR`, `zh-hant-tw` → `zh-Hant-TW`. Letters, digits and `-` only, in a
    /// tag's shape: a language of 2–3 letters, then subtags of 1–8; at most 35 bytes.
    public static func normalizedLanguage(_ tag: String) throws(RequestError) -> String {
        let invalid = RequestError.invalidValue(.language, "must be a language tag such as en-US")
        guard (2...35).contains(tag.utf8.count) else { throw invalid }
        func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var normalized: [UInt8] = []
        for (index, subtag) in tag.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            .enumerated()
        {
            guard (1...8).contains(subtag.count), subtag.allSatisfy({ isLetter($0) || isDigit($0) }) else {
                throw invalid
            }
            let letters = subtag.allSatisfy(isLetter)
            if index == 0 {
                guard (2...3).contains(subtag.count), letters else { throw invalid }
            } else {
                normalized.append(UInt8(ascii: "-"))
            }
            for (position, byte) in subtag.enumerated() {
                // The language and other subtags lower case, a region (2 letters) upper case,
                // a script (4 letters) with a capital.
                let upper = index > 0 && letters && (subtag.count == 2 || (subtag.count == 4 && position == 0))
                normalized.append(isLetter(byte) ? (upper ? byte & ~0x20 : byte | 0x20) : byte)
            }
        }
        return String(decoding: normalized, as: UTF8.self)
    }
}

/// Why a request's parameters were refused.
public enum RequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A known parameter with a value amodb would not accept.
    case invalidValue(QueryParameter, String)
    /// A parameter the route does not take (only when building requests in code).
    case unsupportedParameter(QueryParameter)

    public var description: String {
        switch self {
        case .invalidValue(let parameter, let problem): "Invalid parameter: \(parameter.rawValue) \(problem)."
        case .unsupportedParameter(let parameter):
            "Invalid parameter: \(parameter.rawValue) is not accepted by this route."
        }
    }
}
