import Testing

@testable import AmodbProxy

/// Log numbers are printed without `Double`'s description, exactly as it printed them.
struct LogNumberTests {
    @Test(arguments: [0.0, 0.123, 12.5, 3, 0.0004, 0.0005, 1.05, 1.1, 99.999, 1234.5678, 30000.001, 0.01, 0.1, 7.07])
    func printsAtMostThreeDecimalsAsBefore(value: Double) {
        let scaled = (value * 1000).rounded() / 1000
        let expected = scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)
        #expect(LogValue.number(value).plain == expected)
    }
}
