import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// A `rediss://` server whose certificate does not verify is an outage with its reason in
/// the log, `/readyz` and a metric: the replica spends only its part of the limit, and
/// never talks to that server in plain text or unverified.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)),
    .enabled(if: TestCertificates.executable != nil, "openssl is not installed"), .timeLimit(.minutes(1)))
struct RedisCertificateTests {
    @Test func anExpiredCertificateIsAnOutageThatSaysWhy() async throws {
        let certificates = try await RedisTransport.certificates.value
        let tls = RedisServerTLS(certificates, served: certificates.expiredServer)
        try await withRedisServer(tls: tls) { server in
            let fleet = try Fleet(
                1, redis: server.configuration(),
                upstream: ScriptedUpstream(fallback: RedisOutageTests.movie),
                adjust: {
                    $0.missWait = 0
                    $0.budgetReserve = 0
                })
            try await withServer(fleet) { fleet in
                // No first reply within a second of the start: the outage is declared.
                #expect(
                    await eventually {
                        (try? await fleet[0].metrics().value("amodb_proxy_redis_outage")) == 1
                    })
                let samples = try await fleet[0].metrics()
                #expect(try samples.value("amodb_proxy_redis_certificate_rejected") == 1)
                #expect(try samples.value("amodb_proxy_redis_up") == 0)
                let ready = try await fleet[0].get("/readyz")
                #expect(ready.status == 200)
                #expect(
                    ready.text.contains(
                        #""redis":"unreachable: redis TLS certificate rejected: certificate has expired""#),
                    "\(ready.text)")
                #expect(
                    await eventually {
                        fleet.logs[0].all.contains {
                            $0.contains("redis unreachable") && $0.contains("certificate has expired")
                        }
                    })
                // An outage's rule: nothing from the fleet's window, and here no reserve.
                let refused = try await fleet[0].get("/3/movie/550")
                #expect(refused.status == 503)
                #expect(refused.text.contains("Calls to amodb are paused: Redis is unreachable"), "\(refused.text)")
                #expect(fleet.upstream.calls.isEmpty)
            }
        }
    }

    /// A TLS file that cannot be used stops the start naming its own setting, whichever
    /// other files are set: a client key that does not match its certificate is the key's
    /// fault, not the CA file's.
    @Test func aTLSFileThatCannotBeUsedIsReportedUnderItsOwnSetting() async throws {
        let certificates = try await RedisTransport.certificates.value
        let base = [
            "AMODB_KEY": "k", "AMODB_REDIS_URL": "rediss://cache:6380",
            "AMODB_REDIS_CA_FILE": certificates.authority.certificate,
        ]
        let cases: [(files: [String: String], setting: String)] = [
            (
                [
                    "AMODB_REDIS_CERT_FILE": certificates.client.certificate,
                    "AMODB_REDIS_KEY_FILE": certificates.server.key,
                ],
                "AMODB_REDIS_KEY_FILE"
            ),
            (
                ["AMODB_REDIS_CERT_FILE": "/etc/hostname", "AMODB_REDIS_KEY_FILE": certificates.client.key],
                "AMODB_REDIS_CERT_FILE"
            ),
            (
                ["AMODB_REDIS_CERT_FILE": certificates.client.certificate, "AMODB_REDIS_KEY_FILE": "/etc/hostname"],
                "AMODB_REDIS_KEY_FILE"
            ),
            (["AMODB_REDIS_CERT_FILE": certificates.client.certificate], "AMODB_REDIS_KEY_FILE"),
            (["AMODB_REDIS_CA_FILE": "/etc/hostname"], "AMODB_REDIS_CA_FILE"),
        ]
        for (files, setting) in cases {
            #expect {
                _ = try ConfigurationLoader.load(arguments: [], environment: base.merging(files) { $1 })
            } throws: { error in
                (error as? ConfigurationError)?.setting == setting && "\(error)".hasPrefix(setting)
            }
        }
        // The right files pass.
        let good = base.merging([
            "AMODB_REDIS_CERT_FILE": certificates.client.certificate, "AMODB_REDIS_KEY_FILE": certificates.client.key,
        ]) { $1 }
        #expect(throws: Never.self) { _ = try ConfigurationLoader.load(arguments: [], environment: good) }
    }

    /// A client key that does not match its client certificate (a real key, of another
    /// certificate) is the key's fault, said under `AMODB_REDIS_KEY_FILE` and naming the key
    /// file, whether a CA file is set or the system's trust store is used.
    @Test(arguments: [true, false])
    func aKeyThatDoesNotMatchItsCertificateIsReportedUnderTheKeysSetting(withCAFile: Bool) async throws {
        let certificates = try await RedisTransport.certificates.value
        for wrongKey in [certificates.server.key, certificates.authority.key] {
            var environment = [
                "AMODB_KEY": "k", "AMODB_REDIS_URL": "rediss://cache:6380",
                "AMODB_REDIS_CERT_FILE": certificates.client.certificate, "AMODB_REDIS_KEY_FILE": wrongKey,
            ]
            if withCAFile { environment["AMODB_REDIS_CA_FILE"] = certificates.authority.certificate }
            #expect {
                _ = try ConfigurationLoader.load(arguments: [], environment: environment)
            } throws: { error in
                let refusal = try #require(error as? ConfigurationError)
                return refusal.setting == "AMODB_REDIS_KEY_FILE"
                    && refusal.description.hasPrefix("AMODB_REDIS_KEY_FILE: ") && refusal.description.contains(wrongKey)
                    && !refusal.description.contains("AMODB_REDIS_CA_FILE")
            }
        }
    }
}
