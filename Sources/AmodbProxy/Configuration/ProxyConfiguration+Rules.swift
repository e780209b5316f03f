extension ProxyConfiguration {
    /// The configuration, when its settings agree with each other; else why not, naming the
    /// setting to change. The loader checks every configuration it reads here, and
    /// `ProxyServer` every configuration it is given (one built in code too).
    package func validated() throws(ConfigurationError) -> ProxyConfiguration {
        if limits.maxReadBufferBytes < limits.minimumReadBufferBytes {
            throw ConfigurationError(
                "AMODB_READ_BUFFER_BYTES must hold a whole request head: at least AMODB_MAX_REQUEST_LINE + AMODB_MAX_HEADER_BYTES + 4 = \(limits.minimumReadBufferBytes)",
                setting: "AMODB_READ_BUFFER_BYTES")
        }
        try checkProofRules()
        if let operatorPort, operatorPort != 0, operatorPort == port {
            throw ConfigurationError(
                "AMODB_OPERATOR_PORT must differ from PORT (\(port)): the operator's pages move to a port of their own",
                setting: "AMODB_OPERATOR_PORT")
        }
        try checkRedisClusterRules()
        if verifiesUserTokens {
            let source = jwtSecret != nil ? "AMODB_JWT_SECRET" : "AMODB_JWT_JWKS_URL"
            if jwtIssuers.isEmpty {
                throw ConfigurationError(
                    "AMODB_JWT_ISSUER is required with \(source): list the accepted iss values (such as https://appleid.apple.com)",
                    setting: "AMODB_JWT_ISSUER")
            }
            if jwtAudiences.isEmpty {
                throw ConfigurationError(
                    "AMODB_JWT_AUDIENCE is required with \(source): list the accepted aud values (such as the app's bundle id)",
                    setting: "AMODB_JWT_AUDIENCE")
            }
        }
        return self
    }

    /// Cluster mode's rules: database 0 (a cluster has no other), no Sentinel (a cluster
    /// fails over by itself), and the keys' tag is the prefix, the one every replica writes under.
    private func checkRedisClusterRules() throws(ConfigurationError) {
        guard let redis, let cluster = redis.cluster else { return }
        if redis.sentinels != nil {
            throw ConfigurationError(
                "AMODB_REDIS_CLUSTER is on with AMODB_REDIS_SENTINELS: a cluster fails over by itself and has no sentinels; turn one of them off",
                setting: "AMODB_REDIS_CLUSTER")
        }
        if redis.endpoint.database != 0 {
            throw ConfigurationError(
                "AMODB_REDIS_URL selects database \(redis.endpoint.database), but a cluster has only database 0: end the URL with /0 or nothing",
                setting: "AMODB_REDIS_URL")
        }
        if cluster.hashTag != redisPrefix {
            throw ConfigurationError(
                "the Redis cluster's hash tag {\(cluster.hashTag)} is not AMODB_REDIS_PREFIX \(ConfigurationLoader.shown(redisPrefix)): every key is written under the prefix in braces",
                setting: "AMODB_REDIS_PREFIX")
        }
    }

    /// The proofs' rules: a policy needs a way to prove it, and each proof its settings.
    private func checkProofRules() throws(ConfigurationError) {
        for app in attestApps {
            let parts = app.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10,
                parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }),
                !parts[1].isEmpty
            else {
                throw ConfigurationError(
                    "AMODB_ATTEST_APPS lists apps as TEAMID.bundle.id (a 10-character team id, a dot, the bundle id), not \(ConfigurationLoader.shown(app))",
                    setting: "AMODB_ATTEST_APPS")
            }
        }
        if !appCheckProject.isEmpty, appCheckApps.isEmpty {
            throw ConfigurationError(
                "AMODB_APP_CHECK_PROJECT is set without AMODB_APP_CHECK_APPS: list the Firebase app ids (1:…:ios:…, 1:…:android:…) whose tokens are accepted",
                setting: "AMODB_APP_CHECK_APPS")
        }
        if appCheckProject.isEmpty, !appCheckApps.isEmpty {
            throw ConfigurationError(
                "AMODB_APP_CHECK_APPS is set without AMODB_APP_CHECK_PROJECT: set the Firebase project's number",
                setting: "AMODB_APP_CHECK_PROJECT")
        }
        let attests = !attestApps.isEmpty || !appCheckProject.isEmpty
        switch proof {
        case .attested where !attests, .any where !attests && !verifiesUserTokens:
            throw ConfigurationError(
                "AMODB_PROOF=\(proof.rawValue) needs a way to prove it: set AMODB_ATTEST_APPS (App Attest) or AMODB_APP_CHECK_PROJECT and AMODB_APP_CHECK_APPS (Firebase App Check)",
                setting: "AMODB_PROOF")
        case .user where !verifiesUserTokens:
            throw ConfigurationError(
                "AMODB_PROOF=user needs users' ID tokens to be checked: set AMODB_JWT_JWKS_URL (or AMODB_JWT_SECRET), AMODB_JWT_ISSUER and AMODB_JWT_AUDIENCE",
                setting: "AMODB_PROOF")
        default:
            break
        }
    }
}
