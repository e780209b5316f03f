public import AmodbModels
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls amodb over URLSession: `Authorization: Bearer <key>`, a timeout, connections
/// reused across calls, no local HTTP cache, no cookies, and no redirects followed
/// (a redirect could carry the key's header to another host).
public final class URLSessionUpstreamFetcher: UpstreamFetcher {
    private let baseURL: String
    private let key: Secret
    private let timeout: Double
    private let session: URLSession

    /// `baseURL` is amodb's API root, e.g. `https://api.amodb.dev/3`, possibly with a
    /// path prefix of its own (`http://127.0.0.1:9001/x/3`).
    public init(baseURL: String, key: Secret, timeout: Double = 10, maxConnections: Int = 16) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.key = key
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpMaximumConnectionsPerHost = maxConnections
        self.session = URLSession(configuration: configuration, delegate: RedirectRefuser(), delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
        guard let url = URL(string: baseURL + request.pathAndQuery) else { return .failure(.unreachable) }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = "GET"
        urlRequest.setValue(key.bearerFieldValue, forHTTPHeaderField: "Authorization")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue("amodb-proxy", forHTTPHeaderField: "User-Agent")
        return await withCheckedContinuation { continuation in
            let task = session.dataTask(with: urlRequest) { data, response, error in
                if let error {
                    let code = (error as? URLError)?.code
                    continuation.resume(returning: .failure(code == .timedOut ? .timedOut : .unreachable))
                    return
                }
                guard let http = response as? HTTPURLResponse else {
                    continuation.resume(returning: .failure(.unreachable))
                    return
                }
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                }
                continuation.resume(returning: .success(
                    UpstreamResponse(status: http.statusCode, headers: headers, body: [UInt8](data ?? Data()))))
            }
            task.resume()
        }
    }
}

/// Refuses every redirect: the answer is whatever amodb sent, and the key stays on amodb's host.
private final class RedirectRefuser: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
