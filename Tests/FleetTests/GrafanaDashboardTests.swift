import AmodbRedisTestSupport
import AmodbTestSupport
import Foundation
import Testing

/// deploy/grafana/amodb-proxy.json queries only metrics a real proxy exports: every metric
/// name in its PromQL is a series of `/metrics` of a replica sharing a real Redis (the
/// fleet's families are exported only then).
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct GrafanaDashboardTests {
    /// Every PromQL expression of the dashboard: the panels' targets and the variables' queries.
    static func expressions() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../deploy/grafana/amodb-proxy.json")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var expressions: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    if let text = inner as? String, key == "expr" || key == "definition" { expressions.append(text) }
                    collect(inner)
                }
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(dashboard)
        return expressions
    }

    /// The metric names an expression uses (`amodb_proxy_…`).
    static func metricNames(in expression: String) -> Set<String> {
        var names: Set<String> = []
        var rest = Substring(expression)
        while let start = rest.range(of: "amodb_proxy_") {
            let tail = rest[start.lowerBound...]
            let name = tail.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            names.insert(String(name))
            rest = tail.dropFirst(name.count)
        }
        return names
    }

    /// The names among `names` that are no series of `samples`.
    static func missing(_ names: Set<String>, from samples: PrometheusSamples) -> [String] {
        let exported = Set(samples.samples.map(\.name))
        return names.subtracting(exported).sorted()
    }

    @Test func everyMetricTheDashboardQueriesIsExported() async throws {
        let expressions = try Self.expressions()
        #expect(expressions.count >= 20, "the panels were read: \(expressions)")
        let names = expressions.reduce(into: Set<String>()) { $0.formUnion(Self.metricNames(in: $1)) }
        #expect(names.count >= 15, "\(names.sorted())")
        try await withFleet(1) { fleet, _ in
            // A miss and a hit, so that the request and upstream families have series.
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            let samples = try await fleet[0].metrics()
            #expect(Self.missing(names, from: samples) == [])
            // docs/operations.md's fleet table lists what a replica sharing Redis adds.
            let fleetFamilies = try DocumentedMetrics.families().filter(\.fleet)
            #expect(fleetFamilies.count >= 5, "\(fleetFamilies)")
            let fleetSeries = fleetFamilies.map { $0.type == "histogram" ? $0.name + "_count" : $0.name }
            #expect(Self.missing(Set(fleetSeries), from: samples) == [])
            // The check would see a misspelt name.
            #expect(
                Self.missing(["amodb_proxy_request_total", "amodb_proxy_replicas"], from: samples) == [
                    "amodb_proxy_request_total"
                ])
        }
    }
}
