/// Hands a response given later to the connection that asked for it.
public typealias ResponseDelivery = @Sendable (HTTPResponse) -> Void

/// What the server asks of the application: a response for each request.
///
/// A responder answers at once by returning the response (a cache hit: no task,
/// no queue hop, no closure made), or returns `nil` and hands the response, exactly
/// once and from any thread, to the delivery `later()` makes. It calls `later` only
/// when it answers later, so that an answer given at once costs no allocation.
/// Responses go out in request order whatever order they finish in.
public protocol HTTPResponder: Sendable {
    func respond(to request: borrowing HTTPRequest, later: () -> ResponseDelivery) -> HTTPResponse?

    /// Told when the server itself answered a request it refused before it could be
    /// routed (malformed, over a limit, too slow): for logs and metrics. `head` is the
    /// refused request's bytes as far as they were read, from its first byte.
    func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>)
}

extension HTTPResponder {
    public func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {}
}
