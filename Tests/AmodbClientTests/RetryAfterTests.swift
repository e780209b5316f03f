import AmodbModels
import Foundation
import Testing

@testable import AmodbClient

@Suite("Reading Retry-After")
struct RetryAfterTests {
    /// 2025-06-01T12:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_748_779_200)

    @Test(
        "Delay-seconds and HTTP-dates are read; anything else is nil",
        arguments: [
            ("5", Duration?.some(.seconds(5))), ("0", .seconds(0)), (" 7 ", .seconds(7)), ("120", .seconds(120)),
            ("99999999999999999999999", .seconds(86_400)), ("1e300", nil), ("inf", nil), ("nan", nil),
            ("172800", .seconds(86_400)),
            ("Sun, 01 Jun 2025 12:01:30 GMT", .seconds(90)),  // IMF-fixdate
            ("Sunday, 01-Jun-25 12:00:10 GMT", .seconds(10)),  // RFC 850
            ("Sun Jun  1 12:00:45 2025", .seconds(45)),  // asctime
            ("Sun, 01 Jun 2025 11:00:00 GMT", .seconds(0)),  // in the past
            ("", nil), ("soon", nil), ("-3", nil), ("1.5", nil), ("+5", nil), ("5s", nil),
        ])
    func retryAfterValues(header: String, expected: Duration?) {
        #expect(RetryAfter.delay(header, now: Self.now) == expected)
    }

    @Test func aMissingHeaderIsNil() {
        #expect(RetryAfter.delay(nil, now: Self.now) == nil)
    }

    @Test func aDateWithAFractionOfASecondLeftRoundsUp() {
        let now = Self.now.addingTimeInterval(0.25)
        #expect(RetryAfter.delay("Sun, 01 Jun 2025 12:00:10 GMT", now: now) == .seconds(10))
    }
}
