extension ConfigurationLoader {
    /// Per-connection limits and deadlines (`HTTPLimits`, `HTTPTimeouts`).
    static let connectionSettings: [Setting] = [
        Setting(
            "AMODB_MAX_CONNECTIONS", flag: "--max-connections", \.limits.maxConnections, .integer(1...1_000_000),
            help: "open client connections at most", accepts: "1–1,000,000", doc: "open client connections at most"),
        Setting(
            "AMODB_MAX_REQUEST_LINE", flag: "--max-request-line", \.limits.maxRequestLineBytes,
            .integer(64...1_048_576), help: "longest request line in bytes, else 414", accepts: "64 B – 1 MiB",
            doc: "bytes; longer → 414"),
        Setting(
            "AMODB_MAX_HEADER_BYTES", flag: "--max-header-bytes", \.limits.maxHeaderBytes, .integer(256...1_048_576),
            help: "largest header block in bytes, else 431", accepts: "256 B – 1 MiB",
            doc: "bytes of header fields; more → 431"),
        Setting(
            "AMODB_MAX_HEADER_COUNT", flag: "--max-header-count", \.limits.maxHeaderCount, .integer(1...10_000),
            help: "most header fields, else 431", accepts: "1–10,000", doc: "header fields; more → 431"),
        Setting(
            "AMODB_MAX_BODY_BYTES", flag: "--max-body-bytes", \.limits.maxBodyBytes, .integer(0...1_048_576),
            help: "largest (discarded) GET body in bytes, else 413", accepts: "0 – 1 MiB",
            doc: "body on a GET, read and dropped; more → 413"),
        Setting(
            "AMODB_READ_BUFFER_BYTES", flag: "--read-buffer-bytes", \.limits.maxReadBufferBytes,
            .integer(1024...16_777_216), help: "unparsed input held per connection at most",
            accepts: "1 KiB – 16 MiB, and one whole head", doc: "unparsed input held per connection"),
        Setting(
            "AMODB_MAX_PIPELINED", flag: "--max-pipelined", \.limits.maxPipelinedRequests, .integer(1...1024),
            help: "requests read ahead per connection", accepts: "1–1,024", doc: "requests read ahead per connection"),
        Setting(
            "AMODB_HEAD_TIMEOUT", flag: "--head-timeout", \.timeouts.requestHeadSeconds, .seconds(0.1...hour),
            help: "seconds for a whole request head, else 408", accepts: "0.1 s – an hour",
            doc: "seconds for a whole request head; then 408"),
        Setting(
            "AMODB_BODY_TIMEOUT", flag: "--body-timeout", \.timeouts.requestBodySeconds, .seconds(0.1...hour),
            help: "seconds for a whole request body after its head, else 408", accepts: "0.1 s – an hour",
            doc: "seconds for a whole request body after its head; then 408"),
        Setting(
            "AMODB_IDLE_TIMEOUT", flag: "--idle-timeout", \.timeouts.idleSeconds, .seconds(0.1...day),
            help: "seconds an idle keep-alive connection stays open", accepts: "0.1 s – a day",
            doc: "seconds an idle keep-alive connection stays"),
        Setting(
            "AMODB_WRITE_TIMEOUT", flag: "--write-timeout", \.timeouts.writeSeconds, .seconds(0.1...hour),
            help: "seconds a client may stall our response", accepts: "0.1 s – an hour",
            doc: "seconds a client may stall our answer"),
    ]
}
