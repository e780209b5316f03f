import AmodbHTTP

/// Cross-origin access for web apps (the Fetch standard's CORS protocol): which
/// origins may call, the preflight answer, and the headers on actual answers.
/// The proxy never sends `Access-Control-Allow-Credentials`: apps authenticate with a
/// bearer token in `Authorization`, which needs no credentials mode, so `*` is safe.
struct CORSPolicy: Sendable {
    /// Exact origins (`https://app.example.com`), or `*` for any.
    let origins: Set<String>

    var allowsAnyOrigin: Bool { origins.contains("*") }

    /// The `Access-Control-Allow-Origin` value for a request's `Origin`, or `nil` if not allowed.
    func allowedOrigin(_ origin: String?) -> String? {
        guard let origin else { return nil }
        if allowsAnyOrigin { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    /// Adds the headers an actual (non-preflight) answer carries.
    /// A preflight answer passes through here too (it is an answer on an API route): it
    /// already varies on `Origin`, and a second `Vary` would be noise to every cache.
    func decorate(_ response: inout HTTPResponse, origin: String?) {
        varyOnOrigin(&response.headers)
        guard let allowed = allowedOrigin(origin) else { return }
        response.headers.set("Access-Control-Allow-Origin", allowed)
        response.headers.set("Access-Control-Expose-Headers", "Age, Cache-Status, ETag, Retry-After")
    }

    /// The answer to a preflight `OPTIONS` (RFC 9110 §9.3.7, Fetch §3.2.2).
    func preflight(origin: String?) -> HTTPResponse {
        guard let allowed = allowedOrigin(origin) else {
            var refused = HTTPResponse.error(403, "This origin may not call the proxy.")
            varyOnOrigin(&refused.headers)
            return refused
        }
        var headers = HTTPHeaders()
        headers.add("Access-Control-Allow-Origin", allowed)
        headers.add("Access-Control-Allow-Methods", "GET, HEAD")
        headers.add("Access-Control-Allow-Headers", "Authorization, If-None-Match")
        headers.add("Access-Control-Max-Age", "600")
        varyOnOrigin(&headers)
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: 204, headers: headers)
    }

    /// With a list of origins the answer depends on `Origin` (RFC 9110 §12.5.5); said once.
    private func varyOnOrigin(_ headers: inout HTTPHeaders) {
        guard !allowsAnyOrigin, !headers.containsToken("Origin", in: "Vary") else { return }
        headers.add("Vary", "Origin")
    }
}
