import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Routes each request to the ``StubUpstream`` that owns its host.
final class StubURLProtocol: URLProtocol {
    private static let stubs = Locked<[String: StubUpstream]>([:])

    /// Makes `stub` reachable at its host.
    static func register(_ stub: StubUpstream) {
        stubs.withLock { $0[stub.host] = stub }
    }

    override class func canInit(with request: URLRequest) -> Bool { true }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let host = url.host,
            let stub = Self.stubs.withLock({ $0[host] })
        else {
            client?.urlProtocol(self, didFailWithError: URLError(.cannotFindHost))
            return
        }
        switch stub.answer(request) {
        case .failure(let code):
            client?.urlProtocol(self, didFailWithError: URLError(code))
        case .http(let status, let headers, let body):
            let response = HTTPURLResponse(
                url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: Data(body.utf8))
            client?.urlProtocolDidFinishLoading(self)
        }
    }

    override func stopLoading() {}
}
