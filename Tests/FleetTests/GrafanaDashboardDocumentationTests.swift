import AmodbTestSupport
import Testing

/// Every metric deploy/grafana/amodb-proxy.json queries is explained in docs/operations.md's
/// tables, so an operator reading a panel finds what it plots. Needs no Redis: it reads two
/// files (`GrafanaDashboardTests` checks the names against a fleet's `/metrics`).
struct GrafanaDashboardDocumentationTests {
    /// The families `names` belong to: a histogram's `_bucket`, `_sum` and `_count` series are its family's.
    static func families(of names: Set<String>, histograms: Set<String>) -> Set<String> {
        Set(
            names.map { name in
                for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                    let family = String(name.dropLast(suffix.count))
                    if histograms.contains(family) { return family }
                }
                return name
            })
    }

    @Test func everyMetricTheDashboardQueriesIsInTheOperationsTables() throws {
        let documented = try DocumentedMetrics.families()
        #expect(documented.contains { $0.fleet } && documented.contains { !$0.fleet }, "both tables were read")
        let histograms = Set(documented.filter { $0.type == "histogram" }.map(\.name))
        let queried = try GrafanaDashboardTests.expressions().reduce(into: Set<String>()) {
            $0.formUnion(GrafanaDashboardTests.metricNames(in: $1))
        }
        #expect(queried.count >= 15, "\(queried.sorted())")
        let undocumented = Self.families(of: queried, histograms: histograms).subtracting(documented.map(\.name))
        #expect(undocumented.sorted() == [], "add a row to docs/operations.md's metrics table for each")
        // The check would see a family the tables miss.
        #expect(
            Self.families(
                of: ["amodb_proxy_made_up_total", "amodb_proxy_redis_call_duration_seconds_bucket"],
                histograms: histograms
            )
            .subtracting(documented.map(\.name)) == ["amodb_proxy_made_up_total"])
    }
}
