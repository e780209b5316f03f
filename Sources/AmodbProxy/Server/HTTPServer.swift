import Dispatch

/// A raw-socket HTTP/1.1 server on Dispatch: one listening socket, non-blocking
/// connections, each confined to its own serial queue. No thread per connection.
public final class HTTPServer: Sendable {
    /// Where to listen and the limits every connection obeys.
    public struct Configuration: Sendable {
        /// Address to bind, IPv4 or IPv6 literal.
        public var host: String
        /// Port to bind; 0 picks a free one (tests), read it back from `start()`.
        public var port: Int

        public init(host: String = "127.0.0.1", port: Int = 0) {
            self.host = host
            self.port = port
        }
    }

    let configuration: Configuration
    let responder: any HTTPResponder

    public init(configuration: Configuration, responder: any HTTPResponder) {
        self.configuration = configuration
        self.responder = responder
    }

    /// Binds, listens and starts accepting; returns the bound port.
    public func start() throws -> Int {
        fatalError("not yet")
    }

    /// Stops accepting, lets requests in flight finish for up to `gracePeriod` seconds,
    /// then closes every connection.
    public func shutdown(gracePeriod: Double = 5) async {
    }
}
