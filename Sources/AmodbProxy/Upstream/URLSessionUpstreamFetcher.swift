package import AmodbModels
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Calls amodb over URLSession (`BoundedSession`: connections reused, no local HTTP cache,
/// no cookies, no redirects followed, a deadline for the whole call and a cap on the
/// decoded body) with `Authorization: Bearer <key>`. A redirect could carry the key's
/// header to another host, hence none is followed.
package final class URLSessionUpstreamFetcher: UpstreamFetcher {
    /// The largest body accepted by default, in bytes (after decoding): amodb's largest
    /// answers (a movie with every sub-resource appended) are a few hundred KiB.
    package static let defaultMaxBytes = 2 * 1024 * 1024

    private let baseURL: String
    private let key: Secret
    private let session: BoundedSession

    /// `baseURL` is amodb's API root, e.g. `https://api.amodb.dev/3`, possibly with a
    /// path prefix of its own (`http://127.0.0.1:9001/x/3`). `timeout` (seconds) bounds
    /// each call from start to last byte; `maxBytes` bounds its decoded body.
    package init(
        baseURL: String, key: Secret, timeout: Double = 10, maxBytes: Int = defaultMaxBytes, maxConnections: Int = 16
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.key = key
        self.session = BoundedSession(timeout: timeout, maxBytes: maxBytes, maxConnections: maxConnections)
    }

    package func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
        guard let url = URL(string: baseURL + request.pathAndQuery) else { return .failure(.unreachable) }
        var urlRequest = session.request(for: url)
        urlRequest.setValue(key.bearerFieldValue, forHTTPHeaderField: "Authorization")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        // Only gzip: JSON compresses well with it, and every coding asked for is one more
        // decoder exposed to amodb's bytes (URLSession would otherwise offer deflate, br, zstd).
        urlRequest.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        urlRequest.setValue("amodb-proxy", forHTTPHeaderField: "User-Agent")
        return await session.get(urlRequest)
    }
}
