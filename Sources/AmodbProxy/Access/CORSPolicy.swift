import AmodbBytes
import AmodbHTTP
import Synchronization

/// Cross-origin access for web apps (the Fetch standard's CORS protocol): which
/// origins may call, the preflight answer, and the fields on every other answer.
/// The proxy never sends `Access-Control-Allow-Credentials`: apps authenticate with a
/// bearer token in `Authorization`, which needs no credentials mode, so `*` is safe.
struct CORSPolicy: Sendable {
    /// Exact origins (`https://app.example.com`), or `*` for any.
    let origins: Set<String>
    /// Whether `origins` holds `*`: read once here, as every answer asks.
    let allowsAnyOrigin: Bool
    /// The origins refused so far, each logged once (`nil`: none logged).
    private let refused: RefusedOrigins?

    /// A policy allowing `origins`; an origin refused is logged once to `logger`.
    init(origins: Set<String>, logger: ProxyLogger? = nil) {
        self.origins = origins
        allowsAnyOrigin = origins.contains("*")
        refused = logger.map(RefusedOrigins.init)
    }

    /// Most field names a preflight may ask for: browsers list only those the page set
    /// itself (a TMDB library sets two or three), so a longer list is no page's.
    static let maxRequestedHeaders = 32
    /// Most bytes of `Access-Control-Request-Headers` read, for the same reason.
    static let maxRequestedHeaderBytes = 1024
    /// Seconds a browser may reuse a preflight's answer: Chromium's cap (Firefox allows a day).
    /// Preflights are kept per URL, so a short age would cost a movie page one every few
    /// minutes; a long one grants nothing, as the answer itself carries the origin again.
    static let maxAge = "7200"
    /// The fields a page may read besides the CORS-safelisted ones: how fresh and how
    /// served an answer is, its validator, how long to wait after a 429 or 503, and a 401's
    /// challenge (`error="invalid_token"`: refresh the sign-in token and retry).
    static let exposedHeaders: StaticString =
        "Access-Control-Expose-Headers: Age, Cache-Status, ETag, Retry-After, WWW-Authenticate\r\n"

    /// The `Access-Control-Allow-Origin` value for a request's `Origin`, or `nil` if not allowed.
    func allowedOrigin(_ origin: String?) -> String? {
        guard let origin else { return nil }
        if allowsAnyOrigin { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    /// Adds the fields every answer but a preflight carries. With `*`, the wildcard and the
    /// fields a page may read on every answer, whatever the request sent: the answer is then
    /// the same for every origin and for none, so a shared cache in front (a CDN, nginx's
    /// `proxy_cache`) that stored a request's answer without `Origin` hands web apps one they
    /// can read. With a list, `Vary: Origin` on every answer (it depends on it, RFC 9110
    /// §12.5.5), and for an allowed origin the origin and the fields it may read, so that a
    /// page can read errors too (a 404, a 429's `Retry-After`), not only a 200. Rendered as
    /// lines into the room a cached answer keeps for them: no allocation on a hit, with or
    /// without `Origin`.
    func decorate(_ response: inout HTTPResponse, origin: String?) {
        if allowsAnyOrigin {
            response.renderedFields.append { lines in
                lines.write("Access-Control-Allow-Origin: *\r\n")
                lines.write(Self.exposedHeaders)
            }
            return
        }
        let allowed = allowedOrigin(origin)
        if allowed == nil, let origin { refused?.note(origin) }
        response.renderedFields.append { lines in
            lines.write("Vary: Origin\r\n")
            if let allowed {
                lines.line("Access-Control-Allow-Origin", allowed)
                lines.write(Self.exposedHeaders)
            }
        }
    }

    /// The refusal of a request (not a preflight) from a web page whose origin the list does
    /// not name, or `nil` to go on: no `Origin` (not a browser's), an origin allowed, or `*`.
    /// Refused before anything is done for it, so a page elsewhere cannot spend the key
    /// through its visitors' browsers even where it cannot read the answers (a `no-cors`
    /// fetch). The refusal names that origin in `Access-Control-Allow-Origin`: the page may
    /// read it, and its developer sees why (`refusal(of:)`) instead of "Failed to fetch".
    func refusal(ofRequestFrom origin: String?) -> APIRefusal? {
        guard let origin, !allowsAnyOrigin, !origins.contains(origin) else { return nil }
        var headers = HTTPHeaders()
        headers.add("Access-Control-Allow-Origin", origin)
        return APIRefusal(.originRefused, status: 403, Self.refusal(of: origin), headers: headers)
    }

    /// Adds what the server's own refusals (a head it could not read, the connection cap)
    /// can carry: with `*`, the origin, which takes no `Origin` to say; with a list, nothing,
    /// as the server answers those before any field is read.
    func decorateRefusal(_ response: inout HTTPResponse) {
        guard allowsAnyOrigin else { return }
        decorate(&response, origin: "*")
    }

    /// The answer to a preflight `OPTIONS` (RFC 9110 §9.3.7, Fetch §3.2.2), given the
    /// request's `Origin` and `Access-Control-Request-Headers` (its values joined, if sent
    /// more than once). An allowed origin may send any well-formed field names it asks for:
    /// the proxy reads only the few it knows and forwards none, so echoing them is safe, and
    /// libraries send `Content-Type`, `Cache-Control` or an App Check token on a GET.
    func preflight(origin: String?, requestedHeaders: String?) -> HTTPResponse {
        guard let allowed = allowedOrigin(origin) else {
            if let origin { refused?.note(origin) }
            var refusal = APIRefusal(.preflightRefused, status: 403, Self.refusal(of: origin)).response
            if !allowsAnyOrigin { refusal.headers.add("Vary", "Origin") }
            return refusal
        }
        // Its answer depends on these request fields (Fetch §3.2.3: a cache keyed on the URL
        // alone would hand one page's allowed headers to another's preflight).
        let vary =
            allowsAnyOrigin
            ? "Access-Control-Request-Method, Access-Control-Request-Headers"
            : "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
        guard let names = Self.fieldNames(requestedHeaders ?? "") else {
            var headers = HTTPHeaders()
            headers.add("Access-Control-Allow-Origin", allowed)
            headers.add("Vary", vary)
            return APIRefusal(
                .preflightRefused,
                "Access-Control-Request-Headers must list at most \(Self.maxRequestedHeaders) field names "
                    + "(RFC 9110 tokens), in at most \(Self.maxRequestedHeaderBytes) bytes.",
                headers: headers
            ).response
        }
        var headers = HTTPHeaders()
        headers.add("Access-Control-Allow-Origin", allowed)
        headers.add("Access-Control-Allow-Methods", "GET, HEAD")
        if !names.isEmpty { headers.add("Access-Control-Allow-Headers", names) }
        headers.add("Access-Control-Max-Age", Self.maxAge)
        headers.add("Vary", vary)
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Why a page on `origin` may not call: the origin as the proxy saw it, and the setting
    /// that would allow it (a developer's `localhost` is not `127.0.0.1`, and the port counts).
    static func refusal(of origin: String?) -> String {
        guard let origin else {
            return "A preflight without Origin is no browser's: AMODB_CORS_ORIGINS allows origins by name."
        }
        return "The origin \(RefusedOrigins.shown(origin)) may not call the proxy: AMODB_CORS_ORIGINS does not list it "
            + "(an origin is its scheme, host and port, exactly as the browser sends it)."
    }

    /// The field names a comma-separated list holds (RFC 9110 §5.6.1: spaces around each,
    /// empty elements ignored), joined by `, ` as `Access-Control-Allow-Headers` says them;
    /// empty for none; `nil` when a name is no token (§5.6.2) or the list is over its bounds.
    static func fieldNames(_ list: String) -> String? {
        guard list.utf8.count <= maxRequestedHeaderBytes else { return nil }
        var names: [Substring] = []
        for element in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = element.trimmingSpaces()
            if name.isEmpty { continue }
            guard name.utf8.allSatisfy(ASCIIBytes.isToken), names.count < maxRequestedHeaders else { return nil }
            names.append(name)
        }
        return names.joined(separator: ", ")
    }
}

/// The origins refused so far, each logged once: an operator who left one out of
/// `AMODB_CORS_ORIGINS` finds it in the log. At most `capacity` are remembered (each
/// request may name any origin); past that, one line says the rest are not logged.
final class RefusedOrigins: Sendable {
    static let capacity = 256
    /// The most bytes of an origin shown in a message or a log line.
    static let shownBytes = 200

    private struct Seen {
        var origins: Set<String> = []
        /// Whether an origin past `capacity` came (and was said once).
        var overflowed = false
    }

    private let seen = Mutex(Seen())
    private let logger: ProxyLogger

    init(logger: ProxyLogger) {
        self.logger = logger
    }

    /// Logs `origin` as refused, unless it was already.
    func note(_ origin: String) {
        let shown = Self.shown(origin)
        enum Line { case none, origin, overflow }
        let line = seen.withLock { seen -> Line in
            if seen.origins.contains(shown) { return .none }
            if seen.origins.count < Self.capacity {
                seen.origins.insert(shown)
                return .origin
            }
            defer { seen.overflowed = true }
            return seen.overflowed ? .none : .overflow
        }
        switch line {
        case .origin:
            logger.warning(
                "refused a web page's origin: AMODB_CORS_ORIGINS does not list it (logged once per origin)",
                ["origin": shown])
        case .overflow:
            logger.warning(
                "refused more web pages' origins than are logged one by one: the others are not logged",
                ["logged": String(Self.capacity)])
        case .none:
            break
        }
    }

    /// `origin` as a message shows it: its first `shownBytes` bytes, anything but visible
    /// ASCII as `?`.
    static func shown(_ origin: String) -> String {
        String(
            decoding: origin.utf8.prefix(shownBytes).map { (0x21...0x7E).contains($0) ? $0 : UInt8(ascii: "?") },
            as: UTF8.self)
    }
}
