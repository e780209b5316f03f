/// The proxy's own paths, beside amodb's routes (`RouteTable`): one entry each, with the
/// paths it answers, its metrics label and whether it is an operator's page. Routing, the
/// metrics' `route` label, CORS and the driver's answer (`ProxyDriver.answer(own:)`) read
/// it here.
enum OwnRoute: Int, CaseIterable, Sendable {
    case healthz, readyz, metrics, status, statusJSON, attest

    /// One of the proxy's own routes.
    struct Entry: Sendable {
        /// The paths it answers, exactly.
        let paths: [String]
        /// Its `route` label in the metrics and the access log.
        let label: String
        /// An operator's page (`/metrics`, `/status`, `/status.json`): for a scraper or the
        /// operator's browser, not for apps' pages, so never given CORS.
        let isOperatorPage: Bool
    }

    /// The entries, in `OwnRoute` order.
    static let table: [Entry] = [
        Entry(paths: ["/healthz"], label: "/healthz", isOperatorPage: false),
        Entry(paths: ["/readyz"], label: "/readyz", isOperatorPage: false),
        Entry(paths: ["/metrics"], label: "/metrics", isOperatorPage: true),
        Entry(paths: ["/status"], label: "/status", isOperatorPage: true),
        Entry(paths: ["/status.json"], label: "/status.json", isOperatorPage: true),
        Entry(
            paths: ["/attest/challenge", "/attest/keys", "/attest/session"], label: "/attest/{endpoint}",
            isOperatorPage: false),
    ]

    /// The route whose entry answers `path`, if any.
    init?(path: String) {
        guard let index = Self.table.firstIndex(where: { $0.paths.contains(path) }) else { return nil }
        self.init(rawValue: index)
    }

    var entry: Entry { Self.table[rawValue] }

    /// Its metrics label.
    var label: ProxyMetrics.RouteLabel { ProxyMetrics.RouteLabel(self) }

    var isOperatorPage: Bool { entry.isOperatorPage }
}
