/// Redis Sentinel: where the sentinels are and which master to ask them for. With it, a
/// connection asks the sentinels for the master's address before each connection attempt
/// (so after a failover it reaches the new master), checks with `ROLE` that the server is
/// the master, and drops a session whose server answers `READONLY` (a master demoted to a
/// replica), asking again.
public struct RedisSentinels: Sendable, Equatable, CustomStringConvertible {
    /// The sentinels, asked in order until one names the master (`AMODB_REDIS_SENTINELS`).
    public var addresses: [RedisEndpoint]
    /// The master's name in the sentinels' configuration (`AMODB_REDIS_MASTER`).
    public var masterName: String

    /// Sentinels at `addresses` (each with its own password, if the sentinels require one) for `masterName`.
    public init(addresses: [RedisEndpoint], masterName: String) {
        self.addresses = addresses
        self.masterName = masterName
    }

    /// Parses `host:port,host:port` (`[v6]:port` for IPv6; 26379 when the port is left
    /// out), each sentinel logged in with `password` when given.
    public init(list: String, masterName: String, password: RedisPassword? = nil) throws(RedisURLError) {
        var addresses: [RedisEndpoint] = []
        for item in list.split(separator: ",") {
            let text = String(item.filter { !$0.isWhitespace })
            guard !text.isEmpty else { continue }
            var endpoint = try RedisEndpoint(url: "redis://" + text)
            guard endpoint.database == 0, endpoint.password == nil else {
                throw RedisURLError("a sentinel is host:port, not \"\(text.prefix(64))\"")
            }
            if !text.hasSuffix(":\(endpoint.port)") { endpoint.port = 26379 }
            endpoint.password = password
            addresses.append(endpoint)
        }
        guard !addresses.isEmpty else { throw RedisURLError("no sentinel listed; expected host:port,host:port") }
        guard !masterName.isEmpty, !masterName.contains(where: \.isWhitespace) else {
            throw RedisURLError("the master's name must be one word, such as mymaster")
        }
        self.init(addresses: addresses, masterName: masterName)
    }

    /// The master's name and the sentinels (passwords redacted).
    public var description: String {
        "master \(masterName) via sentinels " + addresses.map { "\($0.host):\($0.port)" }.joined(separator: ",")
    }
}
