import AmodbModels

/// The proxy's routes: `/healthz`, and under `/3` exactly the forwarded amodb routes.
/// Anything else is answered here and never reaches amodb.
final class ProxyResponder: HTTPResponder {
    /// The prefix apps put in their `baseURL`, as amodb's API root is `…/3`.
    static let apiPrefix = "/3"

    private let forwarder: CachingForwarder
    /// The languages amodb translates: any other shares the `en-US` entry.
    private let languages: [String]

    init(forwarder: CachingForwarder, languages: [String]) {
        self.forwarder = forwarder
        self.languages = languages
    }

    func respond(to request: HTTPRequest, deliver: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = HTTPHeaders()
            headers.set("Allow", "GET, HEAD")
            return .error(405, "Method \(request.method) is not allowed; use GET.", headers: headers)
        }
        if request.path == "/healthz" {
            var response = HTTPResponse.json(200, Array(#"{"status":"ok"}"#.utf8))
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        guard let route = Self.route(for: request.path) else {
            return .error(404, "The resource you requested could not be found.")
        }
        let amodbRequest: AmodbRequest
        do {
            // amodb answers an untranslated language (or none) in English: one entry for all of them.
            amodbRequest = try AmodbRequest(route: route, query: request.query).resolvingLanguage(among: languages)
        } catch {
            return .error(400, error.description)
        }
        return forwarder.respond(to: amodbRequest, ifNoneMatch: request.headers["If-None-Match"], deliver: deliver)
    }

    /// The forwarded route a path names, or `nil`.
    static func route(for path: String) -> Route? {
        guard path.hasPrefix(apiPrefix + "/") else { return nil }
        return Route(path: String(path.dropFirst(apiPrefix.count)))
    }
}
