import AmodbTestSupport
import Testing

@Suite struct PrometheusSamplesTests {
    static let text = """
        # TYPE amodb_proxy_stale_responses_total counter
        amodb_proxy_stale_responses_total{reason="error"} 0
        amodb_proxy_stale_responses_total{reason="budget"} 2
        """

    @Test func aSeriesThatIsPresentReadsItsValueEvenWhenZero() throws {
        let samples = try PrometheusSamples(Self.text)
        #expect(try samples.value("amodb_proxy_stale_responses_total", ["reason": "error"]) == 0)
        #expect(try samples.value("amodb_proxy_stale_responses_total") == 2)
    }

    @Test(
        arguments: [
            ("amodb_proxy_cache_events_total", [:]),
            ("amodb_proxy_stale_responses_total", ["reason": "revalidate"]),
            ("amodb_proxy_stale_responses_total", ["cause": "error"]),
        ] as [(String, [String: String])])
    func aMissingSeriesIsAnErrorNotZero(name: String, labels: [String: String]) throws {
        let samples = try PrometheusSamples(Self.text)
        #expect(throws: PrometheusSamples.MissingSeries.self) { try samples.value(name, labels) }
    }
}
