/// Hands a response given later to the connection that asked for it.
public typealias ResponseDelivery = @Sendable (HTTPResponse) -> Void

/// Where the server calls a responder from.
public struct ResponderContext: Sendable {
    /// The index of the event loop whose queue the call runs on (0 ..< `HTTPServer.eventLoopCount()`):
    /// state kept per loop then has a single writer and needs no lock. `nil` for a call from
    /// anywhere else (a test); never valid in a later delivery, which runs elsewhere.
    public var loopIndex: Int?

    public init(loopIndex: Int? = nil) {
        self.loopIndex = loopIndex
    }
}

/// What the server asks of the application: a response for each request.
///
/// A responder answers at once by returning the response (a cache hit: no task,
/// no queue hop, no closure made), or returns `nil` and hands the response, exactly
/// once and from any thread, to the delivery `later()` makes. It calls `later` only
/// when it answers later, so that an answer given at once costs no allocation.
/// Responses go out in request order whatever order they finish in.
public protocol HTTPResponder: Sendable {
    func respond(to request: borrowing HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery)
        -> HTTPResponse?

    /// Told when the server itself answered a request it refused before it could be
    /// routed (malformed, over a limit, too slow): for logs and metrics. `head` is the
    /// refused request's bytes as far as they were read, from its first byte.
    func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>)
}

extension HTTPResponder {
    public func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {}
}
