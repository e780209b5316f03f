extension AmodbSandbox {
    /// What the sandbox accepts and how it paces answers; every default in one place.
    public struct Configuration: Sendable {
        /// The key the sandbox accepts (as `Authorization: Bearer <key>` or `api_key=<key>`).
        public var apiKey: String
        /// More keys that are accepted, each with its own rate-limit window.
        public var additionalKeys: Set<String>
        /// Keys whose plan has expired: answered with 402 (wins over being accepted).
        public var expiredKeys: Set<String>
        /// The plan's limit: calls per key in any sliding 60-second window (amodb plans: 20, 40, 120).
        public var requestsPerMinute: Int
        /// Delay before every answer (a scripted `.delay` replaces it for that answer).
        public var latency: Duration
        /// The clock the rate limit reads; replace it to move time in tests.
        public var now: @Sendable () -> ContinuousClock.Instant
        /// How many of the latest requests `receivedRequests` keeps (older ones are dropped,
        /// so a long-running `--sandbox` demo does not grow without bound).
        public var recordLimit: Int

        /// A configuration; every parameter has the default a demo wants.
        public init(
            apiKey: String = "sandbox-key",
            additionalKeys: Set<String> = [],
            expiredKeys: Set<String> = [],
            requestsPerMinute: Int = 40,
            latency: Duration = .zero,
            now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
            recordLimit: Int = 1_000
        ) {
            self.apiKey = apiKey
            self.additionalKeys = additionalKeys
            self.expiredKeys = expiredKeys
            self.requestsPerMinute = requestsPerMinute
            self.latency = latency
            self.now = now
            self.recordLimit = recordLimit
        }

        /// True for a key that is accepted (whether or not its plan has expired).
        func knows(_ key: String) -> Bool {
            key == apiKey || additionalKeys.contains(key) || expiredKeys.contains(key)
        }
    }
}
