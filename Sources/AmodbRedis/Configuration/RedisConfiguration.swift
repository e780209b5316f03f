/// Everything a `RedisClient` needs, every default in one place.
public struct RedisConfiguration: Sendable, CustomStringConvertible {
    /// Where to connect and how to log in.
    public var endpoint: RedisEndpoint
    /// Redis Sentinel: the master is wherever the sentinels say (the endpoint's host and
    /// port are then not used; its credentials, database and scheme are); `nil`: the endpoint.
    public var sentinels: RedisSentinels?
    /// Redis Cluster: the endpoint is a node to learn the cluster from (a managed service's
    /// configuration endpoint), and every command goes to the master of the mode's one slot
    /// (see `RedisClusterMode`); `nil`: a single server (or Sentinel's master).
    public var cluster: RedisClusterMode?
    /// Files for `rediss://` (a private CA, a client certificate); unused for `redis://`.
    public var tls = RedisTLSFiles()
    /// Longest wait for TCP connect plus `AUTH`/`SELECT`. Short: Redis sits on the same private network.
    public var connectTimeout: Duration = .milliseconds(250)
    /// Longest wait for one command's reply. Tens of milliseconds: it is on a client's
    /// request path, and a slow Redis must cost less than calling amodb would.
    public var commandTimeout: Duration = .milliseconds(50)
    /// First wait before reconnecting after a failure; doubles after each failed attempt.
    public var reconnectBackoff: Duration = .milliseconds(50)
    /// Longest wait between reconnection attempts.
    public var maxReconnectBackoff: Duration = .seconds(2)
    /// Connections in the pool, used round robin (one per event loop is plenty: each pipelines).
    public var connectionCount = 2
    /// Commands waiting for a reply on one connection before new ones fail at once.
    public var maxPendingCommands = 10_000
    /// Limits on what the server may send.
    public var limits = RESPLimits()

    /// A configuration for `endpoint` with the defaults above.
    public init(endpoint: RedisEndpoint) {
        self.endpoint = endpoint
    }

    /// A configuration parsed from `redis[s]://[[user]:password@]host[:port][/db]`.
    public init(url: String) throws(RedisURLError) {
        self.init(endpoint: try RedisEndpoint(url: url))
    }

    /// This configuration for one node at `host` and `port`, as it is: logged in and over
    /// TLS as configured, but with no Sentinel and no cluster to find another, and database 0.
    func node(_ host: String, _ port: Int) -> RedisConfiguration {
        var configuration = self
        configuration.cluster = nil
        configuration.sentinels = nil
        configuration.endpoint.host = host
        configuration.endpoint.port = port
        configuration.endpoint.database = 0
        return configuration
    }

    /// Checks that TLS can be set up as configured (libssl loads, the CA and client files
    /// load and match), so that a program learns it when it starts rather than from an
    /// outage; does nothing for `redis://`.
    public func checkTLS() throws(RedisTLSError) {
        guard endpoint.usesTLS else { return }
        _ = try RedisTLSContext(files: tls)
    }

    /// The endpoint (password redacted) and timeouts.
    public var description: String {
        (sentinels.map { "\($0), then " } ?? "") + (cluster.map { "\($0) via " } ?? "")
            + "\(endpoint) connect \(connectTimeout) command \(commandTimeout) connections \(connectionCount)"
    }
}
