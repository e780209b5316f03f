/// The line `--sandbox` prints for the person at the terminal: a first request that works
/// with this configuration. When a credential is required the plain `curl` gets 401, so the
/// line says which header the request needs and where its value comes from; it never holds
/// a token itself (the terminal's scrollback is no place for one).
package enum SandboxHint {
    /// The hint for `configuration`, the proxy listening on `port`.
    package static func line(for configuration: ProxyConfiguration, port: Int) -> String {
        let url = "http://127.0.0.1:\(port)/3/trending/movie/week"
        if configuration.proofMode == .enforce, configuration.proof == .attested {
            // Only a genuine copy of the app gets through: no command line can show one.
            return "Try: curl \(url) (401: AMODB_PROOF=attested accepts only an App Attest session or an App Check "
                + "token, which only the app can get; AMODB_PROOF_MODE=monitor serves the rest)"
        }
        let appTokens =
            configuration.proof == .none || configuration.proofMode == .monitor
            ? appTokenSource(configuration) : nil
        let users = configuration.verifiesUserTokens ? userToken(configuration) : nil
        switch (appTokens, users) {
        case (nil, nil):
            return "Try: curl \(url)"
        case (let source?, nil):
            return "Try: TOKEN=<an app token from \(source)>; curl -H \"Authorization: Bearer $TOKEN\" \(url)"
        case (nil, let user?):
            return "Try: TOKEN=<\(user)>; curl -H \"Authorization: Bearer $TOKEN\" \(url)"
        case (let source?, let user?):
            return "Try: TOKEN=<an app token from \(source), or \(user)>; "
                + "curl -H \"Authorization: Bearer $TOKEN\" \(url)"
        }
    }

    /// Where the app tokens come from, or `nil` when none is required.
    private static func appTokenSource(_ configuration: ProxyConfiguration) -> String? {
        if configuration.clientTokensFile != nil { return "AMODB_PROXY_TOKENS_FILE" }
        return configuration.clientTokens.isEmpty ? nil : "AMODB_PROXY_TOKENS"
    }

    /// What a signed-in user's token is, named by what the proxy checks in it (the issuer
    /// and audience are settings, not secrets).
    private static func userToken(_ configuration: ProxyConfiguration) -> String {
        var checked: [String] = []
        if let issuer = configuration.jwtIssuers.first { checked.append("iss \(issuer)") }
        if let audience = configuration.jwtAudiences.first { checked.append("aud \(audience)") }
        let from = configuration.jwtSecret != nil && configuration.jwksURL == nil ? "signed with AMODB_JWT_SECRET" : ""
        let detail = ([from].filter { !$0.isEmpty } + checked).joined(separator: ", ")
        return "a signed-in user's ID token" + (detail.isEmpty ? "" : " (\(detail))")
    }
}
