import AmodbBytes
import AmodbHTTP
import AmodbModels

/// The key an amodb request is cached under: its path and canonical query relative to the
/// API root (`/movie/550?append_to_response=credits&language=de-DE`), the same text as
/// `AmodbRequest.pathAndQuery`. The one place keys are made and read back: the cache, the
/// fleet's Redis keys, the snapshot file and the access log's `key` all hold this text, and
/// a stored key is turned back into its request only by `request(of:)`.
struct CacheKey: Sendable, Hashable {
    /// The key's text.
    let text: String

    /// The key of `request`. Written once into one string, each byte once (no `String` of
    /// the path and no appends): this runs on every request, hit or not. A request without
    /// parameters is its route's path, a literal for every route but a movie's.
    init(_ request: AmodbRequest) {
        if request.appendToResponse.isEmpty, request.language == nil, request.page == nil, request.search == nil {
            text = Self.path(of: request.route)
        } else {
            text = Self.text(of: request)
        }
    }

    /// The request a key's text stands for, if the text is a key the proxy makes: read as a
    /// request's path and query are read (`RouteRequest`), then written again and compared,
    /// as a snapshot file or Redis may hold anything.
    static func request(of text: String) -> AmodbRequest? {
        let question = text.utf8.firstIndex(of: UInt8(ascii: "?"))
        guard let route = RouteRequest.route(pathBytes: text[..<(question ?? text.endIndex)].utf8.span),
            let query = question.map({ RequestQuery(text[text.index(after: $0)...]) }) ?? RequestQuery(),
            let request = try? RouteRequest.request(route, query: query, languages: nil).get(),
            CacheKey(request).text == text
        else { return nil }
        return request
    }

    /// A route's path: `Route.path`, a literal for every route without an id; one with an
    /// id has its path written here (an `Int`'s description and an interpolation cost more
    /// than the rest of the key).
    static func path(of route: Route) -> String {
        guard route.id != nil else { return route.path }
        return ByteWriter.string(atMost: maxPathBytes) { write(pathOf: route, to: &$0) }
    }

    /// Most bytes a path takes: the longest template's fixed bytes and the digits of an
    /// `Int` at their widest (a placeholder that is no id is a word shorter than those).
    static let maxPathBytes =
        RouteTable.entries.map { entry in
            entry.parts.reduce(0) { count, part in
                if case .literal(let bytes) = part { count + bytes.count } else { count + ByteWriter.maxNumberBytes }
            }
        }.max()!

    /// Writes a route's path. A negative id (only code makes one: the reader refuses a sign)
    /// gets its `-`.
    static func write(pathOf route: Route, to writer: inout ByteWriter) {
        guard let id = route.id else {
            writer.write(route.path)  // a literal: no allocation
            return
        }
        // The template's fixed bytes, then the id (`RouteRequest.idPrefixes`).
        let prefix = RouteRequest.idPrefixes[route.kind.rawValue]
        RouteRequest.program.withUnsafeBytes { writer.write(UnsafeRawBufferPointer(rebasing: $0[prefix])) }
        writer.write(decimal: id)
    }

    /// The key of a request with parameters, in `queryItems`' order (sorted by name). The
    /// path may take less than the room counted for it (`maxPathBytes`); the writer checks
    /// every write against the room, so a count that came out short stops the process
    /// rather than write past it.
    private static func text(of request: AmodbRequest) -> String {
        let appended = request.appendToResponse
        let language = request.language
        let page = request.page
        var count = maxPathBytes
        if !appended.isEmpty {
            count += 1 + QueryParameter.appendToResponse.rawValue.utf8.count + 1 + appended.count - 1
            for name in appended { count += name.utf8.count }
        }
        if let language { count += 1 + QueryParameter.language.rawValue.utf8.count + 1 + language.utf8.count }
        if page != nil { count += 1 + QueryParameter.page.rawValue.utf8.count + 1 + ByteWriter.maxNumberBytes }
        let search = request.search.map(AmodbRequest.percentEncoded)
        if let search { count += 1 + QueryParameter.query.rawValue.utf8.count + 1 + search.utf8.count }
        return ByteWriter.string(atMost: count) { writer in
            write(pathOf: request.route, to: &writer)
            var separator = UInt8(ascii: "?")
            func parameter(_ name: QueryParameter) {
                writer.write(separator)
                separator = UInt8(ascii: "&")
                writer.write(name.rawValue)
                writer.write(UInt8(ascii: "="))
            }
            if !appended.isEmpty {
                parameter(.appendToResponse)
                for (index, name) in appended.enumerated() {
                    if index > 0 { writer.write(UInt8(ascii: ",")) }
                    writer.write(name)
                }
            }
            if let language {
                parameter(.language)
                writer.write(language)
            }
            if let page {
                parameter(.page)
                writer.write(decimal: page)
            }
            if let search {
                parameter(.query)
                writer.write(search)
            }
        }
    }
}
