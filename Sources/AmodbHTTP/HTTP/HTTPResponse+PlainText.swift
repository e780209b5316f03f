extension HTTPResponse {
    /// How an application words the answers the server gives itself (a malformed request, a
    /// limit passed, a peer too slow, the connection cap): a response for a status and a
    /// message. The server sets `Connection: close` and any `Retry-After` on it.
    public typealias ErrorMaker = @Sendable (_ status: Int, _ message: String) -> HTTPResponse

    /// The server's own error answer when the application gives none: the message as plain
    /// text, never stored by caches.
    public static func plainTextError(_ status: Int, _ message: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "text/plain;charset=utf-8")
        headers.set("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: headers, body: Array((message + "\n").utf8))
    }
}
