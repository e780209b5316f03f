/// The UTC date and time of day of a second counted from 1970, by arithmetic (Howard
/// Hinnant's `civil_from_days`, the proleptic Gregorian calendar): no `gmtime_r`, which
/// takes glibc's time-zone lock. The `Date` field and the log lines' times are both
/// written from it, each in its own format.
public struct CivilTime: Equatable, Sendable {
    /// The year, clamped to 0…9999 (four digits in every format written from it).
    public let year: Int
    /// 1…12.
    public let month: Int
    /// 1…31.
    public let day: Int
    /// 0…23, 0…59, 0…59.
    public let hour: Int
    public let minute: Int
    public let second: Int
    /// 0 for Sunday … 6 for Saturday.
    public let weekday: Int

    public init(epochSeconds: Int) {
        let days = epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400
        let secondOfDay = epochSeconds - days * 86_400
        weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (4)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // March is 0
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = min(max(yearOfEra + era * 400 + (month <= 2 ? 1 : 0), 0), 9999)
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    /// The second counted from 1970 at which a UTC date and time of day begins: the inverse
    /// of `init(epochSeconds:)` (Hinnant's `days_from_civil`), for reading times back from
    /// text. `month` 1…12 and `day` 1…31 are the caller's to check.
    public static func epochSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }
}
