import Foundation

/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
enum RetryAfter {
    /// The delay the header asks for, or `nil` when it is missing or unreadable.
    /// A date in the past is a delay of zero; fractions of a second round up.
    static func delay(_ value: String?, now: Date = Date()) -> Duration? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Absurdly long digit strings overflow Int; treat them as "a very long time".
            return .seconds(Int(text) ?? Int(Int32.max))
        }
        guard let date = httpDate(text) else { return nil }
        return .seconds(Int(max(0, date.timeIntervalSince(now)).rounded(.up)))
    }

    /// Parses the three HTTP-date forms a recipient must accept (RFC 9110 §5.6.7):
    /// IMF-fixdate, the obsolete RFC 850 form and asctime.
    static func httpDate(_ text: String) -> Date? {
        // A formatter per call: DateFormatter is not Sendable and 429s are rare.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
