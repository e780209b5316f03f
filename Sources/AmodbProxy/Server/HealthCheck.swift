import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `amodb-proxy --healthcheck`: asks the proxy on this machine for `/healthz`, so a
/// container `HEALTHCHECK` needs no curl in the image.
package enum HealthCheck {
    /// True when `GET /healthz` on the configured port answers 200 within `timeout` seconds.
    package static func run(configuration: ProxyConfiguration, timeout: Double = 3) async -> Bool {
        let host: String =
            switch configuration.host {
            case "0.0.0.0", "": "127.0.0.1"
            case "::", "[::]": "[::1]"
            case let host where host.contains(":") && !host.hasPrefix("["): "[\(host)]"
            case let host: host
            }
        guard let url = URL(string: "http://\(host):\(configuration.port)/healthz") else { return false }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "GET"
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        return await withCheckedContinuation { continuation in
            session.dataTask(with: request) { _, response, _ in
                continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode == 200)
            }.resume()
        }
    }
}
