import AmodbModels
import Foundation

extension RetryAfter {
    /// The delay the header asks for as a `Duration` (whole seconds, rounded up), or `nil`
    /// when it is missing or unreadable; the reading itself is `RetryAfter.seconds`.
    static func delay(_ value: String?, now: Date = Date()) -> Duration? {
        seconds(value, now: now).flatMap { $0.checkedInt(.up, clampedTo: 0...Int(RetryAfter.longest)) }.map {
            .seconds($0)
        }
    }
}
