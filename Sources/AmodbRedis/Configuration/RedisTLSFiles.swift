/// The files a `rediss://` connection reads, besides the system's trust store: a private
/// CA, and the client certificate and key for servers that require one. Paths, read once
/// when the client is made; none of them can turn verification off.
public struct RedisTLSFiles: Sendable, Equatable {
    /// PEM file of the CA certificates that sign the server's certificate
    /// (`AMODB_REDIS_CA_FILE`); `nil`: the system's trust store (a public CA).
    public var caFile: String?
    /// PEM file of the client's certificate chain (`AMODB_REDIS_CERT_FILE`), for servers
    /// that require one (`tls-auth-clients yes`); needs `keyFile`.
    public var certificateFile: String?
    /// PEM file of the client certificate's private key (`AMODB_REDIS_KEY_FILE`).
    public var keyFile: String?

    /// Files given piece by piece; all `nil`: the system's trust store, no client certificate.
    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}
