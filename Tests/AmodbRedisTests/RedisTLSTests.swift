import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// `rediss://` against a real `redis-server` with TLS on its port and certificates made
/// for the test: the server verified and its name checked, every way a certificate can
/// fail named in the error, client certificates, and no way back to plain text.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)),
    .enabled(if: TestCertificates.executable != nil, "openssl is not installed"), .timeLimit(.minutes(1)))
struct RedisTLSTests {
    /// One set of certificates for the suite's tests (made once: a few `openssl` runs).
    static let certificates = Task { try await TestCertificates() }

    @Test(arguments: ["127.0.0.1", "localhost"])
    func storesAndReadsBackOverVerifiedTLS(_ host: String) async throws {
        let certificates = try await Self.certificates.value
        try await withRedisServer(password: "tls pw", tls: RedisServerTLS(certificates)) { server in
            var configuration = server.configuration()
            // By IP address (checked against the certificate's IP entry) and by name (DNS entry, sent as SNI).
            configuration.endpoint.host = host
            try await withRedisClient(configuration) { client in
                let value = Array(repeating: UInt8(ascii: "x"), count: 200_000)
                let written = try await client.set("big", value)
                #expect(written)
                let readBack = try await client.get("big")
                #expect(readBack == value)
                // Many commands pipelined at once through TLS records.
                let replies = await client.pipeline((0..<500).map { _ in ["INCR", .bulk("n")] })
                let last = try replies.last?.get()
                #expect(last == .integer(500))
            }
        }
    }

    @Test(arguments: [
        (Served.otherAuthority, "127.0.0.1", "unable to get local issuer certificate"),
        (Served.otherName, "127.0.0.1", "IP address mismatch"),
        (Served.otherName, "localhost", "hostname mismatch"),
        (Served.expired, "127.0.0.1", "certificate has expired"),
    ])
    func refusesAServerWhoseCertificateDoesNotVerifyAndSaysWhy(
        _ served: Served, _ host: String, _ reason: String
    ) async throws {
        let certificates = try await Self.certificates.value
        let tls = RedisServerTLS(certificates, served: served.pair(certificates))
        try await withRedisServer(tls: tls) { server in
            var configuration = server.configuration()
            configuration.endpoint.host = host
            try await withRedisClient(configuration) { client in
                await #expect(throws: RedisError.certificateRejected(reason)) { try await client.ping() }
                // Still refused on the next attempts (backing off or reconnecting): never used unverified.
                for _ in 0..<3 {
                    await #expect {
                        try await client.ping()
                    } throws: { error in
                        error as? RedisError == .certificateRejected(reason)
                    }
                }
            }
        }
    }

    @Test
    func neverFallsBackToPlainText() async throws {
        try await withRedisServer { plain in
            var configuration = plain.configuration()
            configuration.endpoint.usesTLS = true
            configuration.connectTimeout = .milliseconds(500)
            try await withRedisClient(configuration) { client in
                // The server reads the ClientHello as the start of a command and waits for its end.
                await #expect {
                    try await client.ping()
                } throws: { error in
                    switch error as? RedisError {
                    case .timedOut(.connect): true
                    case .unavailable(let reason): reason.hasPrefix("TLS: ")
                    default: false
                    }
                }
                #expect(!client.isConnected)
            }
            // Nothing was sent in plain text: the one PING the server ran is the observer's own.
            try await withRedisClient(plain.configuration()) { observer in
                let stats = try await observer.send(["INFO", "commandstats"])
                #expect(stats.string?.contains("cmdstat_ping:calls=1,") == true)
            }
        }
    }

    @Test
    func presentsTheClientCertificateWhenTheServerRequiresOne() async throws {
        let certificates = try await Self.certificates.value
        try await withRedisServer(tls: RedisServerTLS(certificates, requireClientCertificate: true)) { server in
            // Without one, the server ends the session (TLS 1.3: after the handshake, at the first read).
            try await withRedisClient(server.configuration()) { client in
                await #expect(throws: RedisError.self) { try await client.ping() }
                #expect(!client.isConnected)
            }
            let withCertificate = server.configuration(
                tlsFiles: RedisTLSFiles(
                    caFile: certificates.authority.certificate, certificateFile: certificates.client.certificate,
                    keyFile: certificates.client.key))
            try await withRedisClient(withCertificate) { client in
                try await client.ping()
                let count = try await client.incr("n")
                #expect(count == 1)
            }
        }
    }

    @Test
    func aStalledHandshakeIsAConnectTimeout() async throws {
        let certificates = try await Self.certificates.value
        // Accepts TCP, reads the ClientHello, never answers.
        try await withServer(try HostileRedis(replies: [[]])) { silent in
            var configuration = RedisConfiguration(
                endpoint: RedisEndpoint(host: "127.0.0.1", port: silent.port, usesTLS: true))
            configuration.tls = RedisTLSFiles(caFile: certificates.authority.certificate)
            configuration.connectTimeout = .milliseconds(300)
            configuration.commandTimeout = .seconds(5)
            // The connect timeout, not the command's: the handshake that never comes is cut
            // by the connect's deadline.
            try await withRedisClient(configuration) { client in
                await #expect(throws: RedisError.timedOut(.connect)) { try await client.ping() }
            }
        }
    }

    @Test
    func refusesFilesThatDoNotLoadWhenChecked() async throws {
        let certificates = try await Self.certificates.value
        var configuration = try RedisConfiguration(url: "rediss://cache.example:6380")
        try configuration.checkTLS()
        configuration.tls = RedisTLSFiles(caFile: certificates.directory.appendingPathComponent("missing.pem").path)
        #expect(throws: RedisTLSError.self) { try configuration.checkTLS() }
        configuration.tls = RedisTLSFiles(
            caFile: certificates.authority.certificate, certificateFile: certificates.client.certificate,
            keyFile: certificates.server.key)
        // OpenSSL refuses a key that does not match as it loads it.
        #expect { try configuration.checkTLS() } throws: { "\($0)".contains("client key \(certificates.server.key)") }
        configuration.tls = RedisTLSFiles(certificateFile: certificates.client.certificate)
        #expect { try configuration.checkTLS() } throws: { "\($0)".contains("both") }
    }

    /// Which server certificate a test serves.
    enum Served: Sendable, CustomTestStringConvertible {
        case otherAuthority, otherName, expired

        func pair(_ certificates: TestCertificates) -> TestCertificates.Pair {
            switch self {
            case .otherAuthority: certificates.serverFromOtherAuthority
            case .otherName: certificates.serverWithOtherName
            case .expired: certificates.expiredServer
            }
        }

        var testDescription: String { "\(self)" }
    }
}
