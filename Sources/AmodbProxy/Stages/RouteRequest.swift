import AmodbBytes
import AmodbHTTP
import AmodbModels

/// The route and the canonical amodb request a head names, read from its bytes in place:
/// what `RequestContext` reads first on every request, with no `String` made of the path or the
/// query but the language's (and most often not even that).
///
/// AmodbModels reads the same from strings, for apps (`Route(path:)`,
/// `AmodbRequest(route:query:)`): those readings are this one's test oracle, and the two agree
/// on every path and query (`RouteRequestTests`). The bytes are read here, as `Span`s, not in
/// the models, which apps compile and which read strings only.
enum RouteRequest {
    /// Whether a path is under the API root (`/3/…`), and the forwarded route it names
    /// there, if any: both read from the path's bytes in place.
    static func route(for path: String) -> (underAPI: Bool, route: Route?) {
        let bytes = path.utf8.span
        guard bytes.count >= apiRoot.count, bytes.extracting(..<apiRoot.count).elementsEqual(apiRoot) else {
            return (false, nil)
        }
        return (true, route(pathBytes: bytes.extracting((apiRoot.count - 1)...)))
    }

    /// `/3/`: what every path under the API root starts with (a route's path starts at its `/`).
    private static let apiRoot = Array((ProxyDriver.apiPrefix + "/").utf8)

    /// The route a path's bytes, relative to the API root, name exactly: the first entry of
    /// `RouteTable` whose template they match, served or not (whether it is served is the
    /// configuration's). Read byte by byte: no split, no intermediate `String`, no grapheme
    /// breaking (which a `Character` split of the path pays on every byte).
    static func route(pathBytes path: Span<UInt8>) -> Route? {
        program.withUnsafeBufferPointer { code in
            path.withUnsafeBufferPointer { path in route(program: code, path: path) }
        }
    }

    /// The canonical request a route's query names, its language resolved among `languages`
    /// (`AmodbRequest.resolvingLanguage(among:)`) when given, or why the query names none.
    static func request(
        _ route: Route, query: RequestQuery, languages: [String]?
    ) -> Result<AmodbRequest, RequestError> {
        Result { () throws(RequestError) in
            try request(route, resolvingLanguageAmong: languages) { (item) throws(RequestError) in
                try query.forEachItem { (name, value) throws(RequestError) in try item(name, value) }
            }
        }
    }

    /// The request a route and its query's decoded items name, read as bytes: `items` calls
    /// the function it is given once per item, in order. With `base`, the language is
    /// resolved as `resolvingLanguage(among:)` resolves it, to one of `base`'s own strings.
    static func request(
        _ route: Route, resolvingLanguageAmong base: [String]?,
        items: (
            _ item: (_ name: Span<UInt8>, _ value: Span<UInt8>) throws(RequestError) -> Void
        ) throws(RequestError) -> Void
    ) throws(RequestError) -> AmodbRequest {
        var reader = QueryReader(route: route, base: base)
        try items { (name, value) throws(RequestError) in try reader.read(name: name, value: value) }
        // Checked in this order whatever the items' order: what each is given as, then the page's range.
        if let error = reader.pageError { throw error }
        let language = try reader.language.get()
        var page: Int?
        if let number = reader.page {
            guard AmodbRequest.pageRange.contains(number) else {
                throw .invalidValue(.page, "must be an integer from 1 to 500")
            }
            page = number == 1 ? nil : number
        }
        var search: String?
        if takes(route.kind, .query) {
            guard let text = reader.search else { throw .invalidValue(.query, "is required") }
            search = try AmodbRequest.canonicalSearch(text)
        }
        return AmodbRequest(
            canonical: route, language: language, page: page,
            appendToResponse: appendedResources(mask: reader.appended), search: search)
    }

    // MARK: The path

    /// The media type a segment names exactly (lower case, as amodb spells it).
    static func mediaType(_ segment: Span<UInt8>) -> MediaType? {
        if ASCIIBytes.equals(segment, "movie") { return .movie }
        if ASCIIBytes.equals(segment, "all") { return .all }
        if ASCIIBytes.equals(segment, "tv") { return .tv }
        if ASCIIBytes.equals(segment, "person") { return .person }
        return nil
    }

    /// The time window a segment names exactly.
    static func timeWindow(_ segment: Span<UInt8>) -> TimeWindow? {
        if ASCIIBytes.equals(segment, "day") { return .day }
        if ASCIIBytes.equals(segment, "week") { return .week }
        return nil
    }

    /// Digits only (no sign, no leading zero), 1 … 2^31-1: ids and pages are never anything else.
    static func positiveInteger(_ digits: Span<UInt8>) -> Int? {
        guard (1...10).contains(digits.count), digits[0] != UInt8(ascii: "0") else { return nil }
        var value = 0
        for index in digits.indices {
            let digit = digits[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value <= Int(Int32.max) ? value : nil
    }
}
