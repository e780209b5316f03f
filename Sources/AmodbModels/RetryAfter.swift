public import Foundation

/// Reads a `Retry-After` field (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
/// The one parser for the client and the proxy, so both wait alike on what amodb says.
public enum RetryAfter {
    /// The longest wait the header can ask for, in seconds: a day. A longer one (or
    /// `99999999999999999999`) is read as a day rather than overflowing a timer.
    public static let longest: Double = 86_400

    /// The delay the header asks for, in seconds (at most ``longest``), or `nil` when it is
    /// missing or unreadable. A date in the past is a delay of zero.
    ///
    /// Only the two forms of the RFC are read: digits (no sign, fraction or exponent, so
    /// `inf`, `nan` and `1e300` are unreadable, never a number to convert) and an HTTP-date.
    public static func seconds(_ value: String?, now: Date = Date()) -> Double? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // More digits than a Double holds exactly is more than a day all the same.
            return min(Double(text) ?? longest, longest)
        }
        guard let date = httpDate(text) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), longest)
    }

    /// Parses the three HTTP-date forms a recipient must accept (RFC 9110 §5.6.7):
    /// IMF-fixdate, the obsolete RFC 850 form and asctime.
    public static func httpDate(_ text: String) -> Date? {
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
