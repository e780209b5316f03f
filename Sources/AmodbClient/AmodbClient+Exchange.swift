import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AmodbClient {
    /// One GET through URLSession: builds the URL, sets the headers and timeout, and maps
    /// transport failures. Any HTTP status is returned, not judged.
    func exchange(pathAndQuery: String, token: BearerToken?) async throws(AmodbClientError) -> AmodbResponse {
        if Task.isCancelled { throw AmodbClientError(.cancelled) }
        var request = URLRequest(url: try url(for: pathAndQuery))
        request.timeoutInterval = Self.effectiveTimeout(timeout)
        request.httpMethod = "GET"
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue(token.headerValue, forHTTPHeaderField: "Authorization") }

        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw transportError(error)
        }
        guard let http = response as? HTTPURLResponse else {
            throw AmodbClientError(.invalidResponse(status: nil, detail: "the answer is not an HTTP response"))
        }
        return AmodbResponse(status: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    /// The value for `URLRequest.timeoutInterval`, in seconds.
    ///
    /// swift-corelibs-foundation honours a request's timeout only when it is assigned
    /// through the property (the initializer's argument is ignored in favour of the
    /// session's 60 s), and truncates it to whole seconds, so 0.5 s would fail at once:
    /// round up there so the timeout is never shorter than asked.
    static func effectiveTimeout(_ timeout: TimeInterval) -> TimeInterval {
        #if canImport(FoundationNetworking)
            return max(1, timeout.rounded(.up))
        #else
            return timeout
        #endif
    }

    /// `baseURL` + `pathAndQuery`: `https://h/x/3` + `/movie/550?language=de-DE` →
    /// `https://h/x/3/movie/550?language=de-DE`. A query on the base URL is kept, after ours.
    func url(for pathAndQuery: String) throws(AmodbClientError) -> URL {
        guard var base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let scheme = base.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = base.host, !host.isEmpty
        else {
            throw AmodbClientError(.invalidRequest("Invalid base URL: it needs http or https and a host."))
        }
        let baseQuery = base.percentEncodedQuery
        base.percentEncodedQuery = nil
        base.percentEncodedFragment = nil
        guard var text = base.string else {
            throw AmodbClientError(.invalidRequest("Invalid base URL."))
        }
        while text.hasSuffix("/") { text.removeLast() }
        text += pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        if let baseQuery, !baseQuery.isEmpty {
            text += (pathAndQuery.contains("?") ? "&" : "?") + baseQuery
        }
        // URL(string:) refuses what URLComponents' percent-encoded setters would trap on.
        guard let url = URL(string: text) else {
            throw AmodbClientError(.invalidRequest("Invalid request: \(pathAndQuery) does not make a valid URL."))
        }
        return url
    }

    /// Classifies what URLSession threw: cancelled, timed out, offline or other.
    private func transportError(_ error: any Error) -> AmodbClientError {
        Self.transportError(error, host: baseURL.host, timeout: timeout)
    }

    /// Classifies what URLSession threw for a request to `host` with `timeout` (seconds):
    /// cancelled, timed out, offline or other.
    static func transportError(_ error: any Error, host: String?, timeout: TimeInterval) -> AmodbClientError {
        if error is CancellationError { return AmodbClientError(.cancelled) }
        let code = (error as? URLError)?.code ?? .unknown
        if code == .cancelled { return AmodbClientError(.cancelled) }
        return AmodbClientError(.transport(code, host: host, timeout: timeout))
    }

    /// The response's header fields as strings, sorted by name (URLSession does not keep
    /// the wire order).
    static func headers(of response: HTTPURLResponse) -> AmodbResponse.Headers {
        let fields = response.allHeaderFields.compactMap { name, value -> (name: String, value: String)? in
            guard let name = name as? String else { return nil }
            return (name, value as? String ?? String(describing: value))
        }
        return AmodbResponse.Headers(fields.sorted { $0.name.lowercased() < $1.name.lowercased() })
    }
}
