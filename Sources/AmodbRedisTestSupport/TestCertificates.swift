package import AmodbRedis
package import AmodbTestSupport
package import Foundation

/// Certificates made for a test with the `openssl` CLI, in a temporary directory: a CA the
/// client trusts and one it does not, server certificates that verify or fail each in
/// their own way, and a client certificate. Every server certificate names `localhost`
/// and `127.0.0.1` unless its purpose is to name something else. P-256 keys: quick to make.
package final class TestCertificates: Sendable {
    /// A certificate and its key, as PEM files.
    package struct Pair: Sendable {
        /// The certificate (PEM).
        package let certificate: String
        /// Its private key (PEM).
        package let key: String
    }

    /// Where `openssl` is, if installed.
    package static let executable: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The directory holding every file; removed by `remove()`.
    package let directory: URL
    /// The CA the client is given (`AMODB_REDIS_CA_FILE`).
    package let authority: Pair
    /// A CA the client does not trust.
    package let otherAuthority: Pair
    /// A server certificate signed by `authority` for `localhost` and `127.0.0.1`.
    package let server: Pair
    /// Signed by `otherAuthority` for the right names.
    package let serverFromOtherAuthority: Pair
    /// Signed by `authority`, but only for `elsewhere.example`.
    package let serverWithOtherName: Pair
    /// Signed by `authority` for the right names, expired a day ago.
    package let expiredServer: Pair
    /// A client certificate signed by `authority`, for servers with `tls-auth-clients yes`.
    package let client: Pair

    /// Makes every certificate (a few hundred milliseconds of `openssl` runs).
    package init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("amodb-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let names = "subjectAltName=DNS:localhost,IP:127.0.0.1"
        authority = try await Self.makeAuthority("ca", in: directory)
        otherAuthority = try await Self.makeAuthority("other-ca", in: directory)
        server = try await Self.make("server", signedBy: authority, extensions: names, days: 2, in: directory)
        serverFromOtherAuthority = try await Self.make(
            "server-other-ca", signedBy: otherAuthority, extensions: names, days: 2, in: directory)
        serverWithOtherName = try await Self.make(
            "server-other-name", signedBy: authority, extensions: "subjectAltName=DNS:elsewhere.example", days: 2,
            in: directory)
        // A negative lifetime: valid until a day before it was made.
        expiredServer = try await Self.make(
            "server-expired", signedBy: authority, extensions: names, days: -1, in: directory)
        client = try await Self.make(
            "client", signedBy: authority, extensions: "extendedKeyUsage=clientAuth", days: 2, in: directory)
    }

    /// Removes the directory and every file in it.
    package func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private static func makeAuthority(_ name: String, in directory: URL) async throws -> Pair {
        let pair = Pair(
            certificate: directory.appendingPathComponent("\(name).pem").path,
            key: directory.appendingPathComponent("\(name).key").path)
        try await openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", pair.key,
            "-out", pair.certificate, "-days", "2", "-subj", "/CN=amodb test \(name)",
        ])
        return pair
    }

    private static func make(
        _ name: String, signedBy authority: Pair, extensions: String, days: Int, in directory: URL
    ) async throws -> Pair {
        let pair = Pair(
            certificate: directory.appendingPathComponent("\(name).pem").path,
            key: directory.appendingPathComponent("\(name).key").path)
        let request = directory.appendingPathComponent("\(name).csr").path
        let extensionFile = directory.appendingPathComponent("\(name).ext").path
        try Data((extensions + "\n").utf8).write(to: URL(fileURLWithPath: extensionFile))
        try await openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", pair.key, "-out",
            request, "-subj", "/CN=amodb test \(name)",
        ])
        try await openssl([
            "x509", "-req", "-in", request, "-CA", authority.certificate, "-CAkey", authority.key, "-CAcreateserial",
            "-out", pair.certificate, "-days", String(days), "-extfile", extensionFile,
        ])
        return pair
    }

    private static func openssl(_ arguments: [String]) async throws {
        guard let executable else {
            throw RedisServer.StartError(description: "openssl is not installed (apt-get install openssl)")
        }
        let child = try ChildProcess(
            executable, arguments, environment: ProcessInfo.processInfo.environment, standardOutput: .pipe,
            standardError: .standardOutput)
        let termination = try await offloaded { child.waitUntilExit() }
        guard termination == .exited(0) else {
            let output = String(decoding: child.standardOutput?.readToEnd() ?? [], as: UTF8.self)
            throw RedisServer.StartError(
                description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(output.suffix(400))")
        }
    }
}

/// How a test `redis-server` speaks TLS: the certificate it presents, the test's CA (which
/// clients trust by default, and which client certificates must come from), and whether
/// it requires a client certificate.
package struct RedisServerTLS: Sendable {
    /// The server's certificate and key.
    package var served: TestCertificates.Pair
    /// The test's CA: what clients trust by default and what signs client certificates.
    package var authority: TestCertificates.Pair
    /// `tls-auth-clients yes`: a client without a certificate is refused.
    package var requireClientCertificate: Bool

    /// TLS serving `served` (by default `certificates.server`), with `certificates.authority` as the CA.
    package init(
        _ certificates: TestCertificates, served: TestCertificates.Pair? = nil, requireClientCertificate: Bool = false
    ) {
        self.served = served ?? certificates.server
        self.authority = certificates.authority
        self.requireClientCertificate = requireClientCertificate
    }

    /// The server settings: TLS on the server's port and no plain-text port at all.
    func arguments(port: Int) -> [String] {
        [
            "--port", "0", "--tls-port", String(port), "--tls-cert-file", served.certificate, "--tls-key-file",
            served.key, "--tls-ca-cert-file", authority.certificate, "--tls-auth-clients",
            requireClientCertificate ? "yes" : "no",
        ]
    }
}
