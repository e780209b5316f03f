import Foundation

extension ConfigurationLoader {
    /// Which proofs of a genuine app a request needs, and how they are checked: Apple App
    /// Attest (verified here) and Firebase App Check tokens.
    static let proofSettings: [Setting] = [
        Setting(
            "AMODB_PROOF", flag: "--proof", \.proof, .proof,
            help: "proof an API request needs: none, attested (App Attest or App Check), user (ID token), any",
            accepts: "`none`, `attested`, `user`, `any`",
            doc:
                "what an API request must prove: `attested` (an App Attest session or a Firebase App Check token), `user` (a signed-in user's ID token), `any` (either), `none` ([app-attestation.md](app-attestation.md))"
        ),
        Setting(
            "AMODB_PROOF_MODE", flag: "--proof-mode", \.proofMode, .proofMode,
            help: "enforce: refuse requests without the proof; monitor: serve them, count and log them",
            accepts: "`enforce`, `monitor`",
            doc:
                "`monitor` serves requests that lack the proof and counts them (`amodb_proxy_requests_by_proof_total`, the access log's `proof`): roll out with it first"
        ),
        Setting(
            "AMODB_ATTEST_APPS", flag: "--attest-apps", \.attestApps, .list,
            help: "App Attest: the apps accepted, TEAMID.bundle.id (comma-separated); empty: App Attest off",
            accepts: "comma-separated `TEAMID.bundle.id`",
            doc: "the apps whose App Attest keys are accepted (team id, a dot, bundle id); empty: `/attest/` is off",
            example: "ABCDE12345.com.example.movies"),
        Setting(
            "AMODB_ATTEST_ALLOW_DEVELOPMENT", flag: "--attest-allow-development", \.attestAllowDevelopment, .onOff,
            help: "accept App Attest keys of development builds (appattestdevelop)", accepts: "`on`, `off`",
            doc: "accept keys made by development builds (`appattestdevelop`), for testing; off in production"),
        Setting(
            "AMODB_ATTEST_ROOT_FILE", flag: "--attest-root-file", \.attestRootFile, .optional,
            help: "PEM root to trust for App Attest instead of Apple's (tests, private deployments)",
            accepts: "a PEM file",
            doc:
                "a PEM root certificate trusted instead of Apple's App Attestation Root CA: for tests only (a warning is logged at start)"
        ),
        Setting(
            "AMODB_ATTEST_SESSION_SECONDS", flag: "--attest-session-seconds", \.attestSessionSeconds,
            .seconds(60...day),
            help: "lifetime of an App Attest session token", accepts: "60 s – a day",
            doc: "how long a session token the proxy signs after an assertion is good"),
        Setting(
            "AMODB_ATTEST_SESSION_SECRETS", flag: "", \.attestSessionSecrets, .sessionSecrets,
            help:
                "secrets session tokens are signed with (comma-separated, the first signs); empty: derived from the amodb key",
            accepts: "comma-separated, each at least 32 bytes",
            doc:
                "the secrets session tokens are signed with, the first signing and all verifying (rotate by putting a new one first); empty: one derived from the amodb key every replica holds; no flag: it would show in `ps`"
        ),
        Setting(
            "AMODB_APP_CHECK_PROJECT", flag: "--app-check-project", \.appCheckProject, .projectNumber,
            help: "Firebase project number whose App Check tokens are accepted; empty: off", accepts: "digits",
            doc: "the Firebase project number (not its id) whose App Check tokens (`X-Firebase-AppCheck`) are accepted",
            example: "123456789012"),
        Setting(
            "AMODB_APP_CHECK_APPS", flag: "--app-check-apps", \.appCheckApps, .list,
            help: "Firebase app ids accepted in App Check tokens' sub (comma-separated)", accepts: "comma-separated",
            doc: "the Firebase app ids accepted as an App Check token's `sub`; required with `AMODB_APP_CHECK_PROJECT`",
            example: "1:123456789012:ios:0a1b2c3d4e5f"),
        Setting(
            "AMODB_APP_CHECK_JWKS_URL", flag: "--app-check-jwks-url", \.appCheckJWKSURL, .text,
            help: "the key set App Check tokens are verified with", accepts: "an http(s) URL",
            doc: "Firebase App Check's public key set (RS256), fetched at start and hourly"),
    ]
}

/// What an API request must prove about who sends it (`AMODB_PROOF`).
package enum ProofPolicy: String, Sendable, CaseIterable {
    /// Nothing beyond what the tokens settings ask.
    case none
    /// A genuine copy of the app: an App Attest session or a Firebase App Check token.
    case attested
    /// A signed-in user's ID token.
    case user
    /// Either of those.
    case any
}

/// Whether a request that lacks the proof is refused or only counted (`AMODB_PROOF_MODE`).
package enum ProofMode: String, Sendable {
    case enforce, monitor
}

extension SettingValue where Value == ProofPolicy {
    fileprivate static let proof = SettingValue(
        read: { text, name throws(ConfigurationError) in
            guard let policy = ProofPolicy(rawValue: text.trimmingSpacesAndNewlines().lowercased()) else {
                throw ConfigurationError(
                    "\(name) must be none, attested, user or any, not \(ConfigurationLoader.shown(text))")
            }
            return policy
        }, show: { $0.rawValue })
}

extension SettingValue where Value == ProofMode {
    fileprivate static let proofMode = SettingValue(
        read: { text, name throws(ConfigurationError) in
            guard let mode = ProofMode(rawValue: text.trimmingSpacesAndNewlines().lowercased()) else {
                throw ConfigurationError("\(name) must be enforce or monitor, not \(ConfigurationLoader.shown(text))")
            }
            return mode
        }, show: { $0.rawValue })
}

extension SettingValue where Value == String {
    /// A Firebase project number: digits only; empty: none.
    fileprivate static let projectNumber = SettingValue(
        read: { text, name throws(ConfigurationError) in
            let value = String(text.trimmingSpacesAndNewlines())
            guard value.allSatisfy({ $0.isASCII && $0.isNumber }), value.count <= 20 else {
                throw ConfigurationError(
                    "\(name) must be the project's number (digits, as in the Firebase console's settings), not \(ConfigurationLoader.shown(text))"
                )
            }
            return value
        }, show: { $0 })

    /// Any text, as given.
    fileprivate static let text = SettingValue(read: { text, _ in text }, show: { $0 })
}

extension SettingValue where Value == [Secret] {
    /// Secrets, comma-separated, each at least 32 bytes; shown only as redacted.
    fileprivate static let sessionSecrets = SettingValue(
        read: { text, name throws(ConfigurationError) in
            let secrets = text.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter {
                !$0.isEmpty
            }
            guard secrets.allSatisfy({ $0.utf8.count >= 32 }) else {
                throw ConfigurationError("\(name) must list secrets of at least 32 bytes each (the value is not shown)")
            }
            return secrets.map(Secret.init)
        }, show: { $0.isEmpty ? "" : "<redacted>" }, secrecy: .secret)
}
