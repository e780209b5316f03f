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

    /// Builds a request, checking and normalizing each parameter. An empty `language` is no
    /// language; `appendToResponse` keeps only the names amodb knows (`appendedResources`).
    public init(
        route: Route, language: String? = nil, page: Int? = nil, appendToResponse: [String] = []
    ) throws(RequestError) {
        if language != nil, !route.parameters.contains(.language) { throw .unsupportedParameter(.language) }
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
    /// the same as none.
    public init(route: Route, query: [(name: String, value: String)]) throws(RequestError) {
        try self.init(route: route, resolvingLanguageAmong: nil) { (item) throws(RequestError) in
            for (name, value) in query {
                try utf8(of: name) { (name) throws(RequestError) in
                    try utf8(of: value) { (value) throws(RequestError) in try item(name, value) }
                }
            }
        }
    }

    /// Builds a request from a route and its query's decoded items, read as bytes: `items`
    /// calls the function it is given once per item, in order. With `base`, the language is
    /// resolved as `resolvingLanguage(among:)` resolves it, to one of `base`'s own strings.
    /// The one reading of a query: a server reads its requests' queries here without making
    /// a string of any of it but the language's, and most often not even that.
    package init(
        route: Route, resolvingLanguageAmong base: [String]?,
        items: (
            _ item: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws(RequestError) ->
                Void
        )
            throws(RequestError) -> Void
    ) throws(RequestError) {
        var reader = QueryReader(route: route, base: base)
        try items { (name, value) throws(RequestError) in try reader.read(name: name, value: value) }
        // Checked in this order whatever the items' order: what each is given as, then the page's range.
        if let error = reader.pageError { throw error }
        let language = try reader.language.get()
        self.route = route
        self.language = language
        if let page = reader.page {
            guard Self.pageRange.contains(page) else { throw .invalidValue(.page, "must be an integer from 1 to 500") }
            self.page = page == 1 ? nil : page
        } else {
            self.page = nil
        }
        appendToResponse = Self.appendedResources(mask: reader.appended)
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

    /// The canonical query items, sorted by name.
    public var queryItems: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if !appendToResponse.isEmpty {
            items.append((QueryParameter.appendToResponse.rawValue, appendToResponse.joined(separator: ",")))
        }
        if let language { items.append((QueryParameter.language.rawValue, language)) }
        if let page { items.append((QueryParameter.page.rawValue, String(page))) }
        return items
    }

    /// Path and canonical query relative to the API root, e.g. `/movie/550?language=de-DE`.
    /// Every value is made of characters that need no percent-encoding in a query.
    public var pathAndQuery: String {
        // The cache key of every hit: without parameters it is the route's path, as it is.
        if appendToResponse.isEmpty, language == nil, page == nil { return route.path }
        // Otherwise written once into one string, in `queryItems`' order, the path's bytes
        // included (no `String` of the path is made): this is the key of every request with
        // parameters, and each append to a `String` checks its capacity and its encoding
        // again, where here each byte is written once. The path may take less than the room
        // counted for it (`Route.maxPathBytes`).
        let pageText = page.map { String($0) }
        var count = Route.maxPathBytes
        if !appendToResponse.isEmpty {
            count += 1 + QueryParameter.appendToResponse.rawValue.utf8.count + 1 + appendToResponse.count - 1
            for name in appendToResponse { count += name.utf8.count }
        }
        if let language { count += 1 + QueryParameter.language.rawValue.utf8.count + 1 + language.utf8.count }
        if let pageText { count += 1 + QueryParameter.page.rawValue.utf8.count + 1 + pageText.utf8.count }
        return String(unsafeUninitializedCapacity: count) { buffer in
            guard let start = buffer.baseAddress else { return 0 }
            var next = start + Route.writePath(of: route, to: start)
            var separator = UInt8(ascii: "?")
            func put(_ byte: UInt8) {
                next.initialize(to: byte)
                next += 1
            }
            func put(_ text: String) {
                var text = text
                text.withUTF8 { bytes in
                    guard let base = bytes.baseAddress else { return }
                    next.initialize(from: base, count: bytes.count)
                    next += bytes.count
                }
            }
            func parameter(_ name: QueryParameter) {
                put(separator)
                separator = UInt8(ascii: "&")
                put(name.rawValue)
                put(UInt8(ascii: "="))
            }
            if !appendToResponse.isEmpty {
                parameter(.appendToResponse)
                for (index, name) in appendToResponse.enumerated() {
                    if index > 0 { put(UInt8(ascii: ",")) }
                    put(name)
                }
            }
            if let language {
                parameter(.language)
                put(language)
            }
            if let pageText {
                parameter(.page)
                put(pageText)
            }
            return next - start
        }
    }

    /// Normalizes a BCP 47 language tag the way amodb reads it: `EN-us` → `en-US`,
    /// `pt-br` → `pt-BR`, `zh-hant-tw` → `zh-Hant-TW`. Letters, digits and `-` only.
    public static func normalizedLanguage(_ tag: String) throws(RequestError) -> String {
        try utf8(of: tag) { (bytes) throws(RequestError) in
            try LanguageTag.normalizing(bytes) { String(decoding: $0, as: UTF8.self) }
        }
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
