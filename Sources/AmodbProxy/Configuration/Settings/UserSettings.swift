import Foundation

extension ConfigurationLoader {
    /// Who may call: apps' client tokens, and users' ID tokens and what they are checked with.
    static let userSettings: [Setting] = [
        Setting(
            "AMODB_PROXY_TOKENS", flag: "", \.clientTokens, .tokens,
            help: "client tokens (comma-separated) required as Bearer; none: open", accepts: "comma-separated tokens",
            doc: "client tokens required as `Authorization: Bearer` (or, without one, as `api_key`); none: open"),
        Setting(
            "AMODB_PROXY_TOKENS_FILE", flag: "--tokens-file", \.clientTokensFile, .optional,
            help: "file of client tokens, one per line, re-read on change", accepts: "a file path",
            doc: "file of client tokens, one per line (`#` comments), re-read when it changes",
            example: "/run/secrets/amodb_proxy_tokens"),
        Setting(
            "AMODB_JWT_SECRET", flag: "", \.jwtSecret, .hmacSecret,
            help: "HS256 secret of users' ID tokens, 32 bytes or more (prefer AMODB_JWT_SECRET_FILE)",
            accepts: "at least 32 bytes",
            doc: "HS256 secret for users' ID tokens ([signing-in.md](signing-in.md)); no flag: it would show in `ps`"),
        Setting(
            "AMODB_JWT_SECRET_FILE", flag: "--jwt-secret-file", \.jwtSecret, .file(holding: .hmacSecret),
            help: "file holding the HS256 secret of users' ID tokens",
            accepts: "a readable file that holds at least 32 bytes",
            doc: "file holding the HS256 secret (container secrets)",
            example: "/run/secrets/amodb_jwt_secret"),
        Setting(
            "AMODB_JWT_JWKS_URL", flag: "--jwt-jwks-url", \.jwksURL, .keySetURL,
            help: "JWKS URL of the RS256/ES256 keys of users' ID tokens; empty: none",
            accepts: "an http(s) URL, no user name or password",
            doc: "key set (RS256, ES256) for users' ID tokens, fetched at start and hourly",
            example: "https://appleid.apple.com/auth/keys"),
        Setting(
            "AMODB_JWT_ISSUER", flag: "--jwt-issuer", \.jwtIssuers, .list,
            help: "accepted iss values of users' ID tokens (comma-separated)", accepts: "comma-separated",
            doc: "accepted `iss` values; required with a secret or a key set, refused without either",
            example: "https://appleid.apple.com"),
        Setting(
            "AMODB_JWT_AUDIENCE", flag: "--jwt-audience", \.jwtAudiences, .list,
            help: "accepted aud values of users' ID tokens (comma-separated)", accepts: "comma-separated",
            doc: "accepted `aud` values; required with a secret or a key set, refused without either",
            example: "com.example.movies"),
        Setting(
            "AMODB_JWT_LEEWAY", flag: "--jwt-leeway", \.jwtLeeway, .seconds(0...hour),
            help: "seconds of clock skew allowed on exp, nbf and iat", accepts: "0 – an hour",
            doc: "clock skew allowed on `exp`, `nbf` and `iat`; another value without a secret or a key set is refused"),
    ]
}

extension SettingValue where Value == String? {
    /// The URL of a JSON Web Key Set: `http(s)`, with a host and without credentials; empty: none.
    fileprivate static let keySetURL = SettingValue(
        read: { value, name throws(ConfigurationError) in
            let text = String(value.trimmingSpacesAndNewlines())
            guard !text.isEmpty else { return nil }
            // Checked before anything else, as the other errors quote the value: a user name
            // or password would be sent with every fetch and shown wherever the URL is.
            if ConfigurationLoader.hasCredentials(text) {
                throw ConfigurationError(
                    "\(name) holds a user name or password (user:password@host); a key set is public and is fetched without credentials: remove them (the URL is not shown)"
                )
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host != nil
            else {
                throw ConfigurationError(
                    "\(name) must be an http(s) URL such as https://appleid.apple.com/auth/keys, not \(ConfigurationLoader.shown(value))"
                )
            }
            return text
        }, show: { $0 ?? "" })
}
