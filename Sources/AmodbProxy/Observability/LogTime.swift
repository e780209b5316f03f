import AmodbHTTP
import Glibc

/// `2026-11-29T20:39:05.123Z` for log lines, written as bytes. A value keeps the date
/// and time of day of the last second it wrote, so whoever owns one (the access log's
/// writer, under the lock it takes per line anyway) formats the calendar once a second
/// and copies it otherwise.
struct LogTime {
    /// The second `prefix` shows, or -1 before the first line.
    private var second = -1
    /// `2026-11-29T20:39:05`, 19 bytes.
    private var prefix: [UInt8] = []

    /// The time now, for a rare line (events, notes): formatted from scratch.
    static var now: String {
        var time = LogTime()
        var bytes: [UInt8] = []
        LogLine.write(.text, maxBytes: length, into: &bytes) { time.write(to: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Bytes one time takes.
    static let length = 24

    /// Writes the time now (`CLOCK_REALTIME`, UTC, milliseconds).
    mutating func write(to cursor: inout LogFields) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        write(time, to: &cursor)
    }

    /// Writes `time`, reformatting the calendar part only when its second changed.
    mutating func write(_ time: timespec, to cursor: inout LogFields) {
        let second = Int(time.tv_sec)
        if second != self.second { format(second) }
        prefix.withUnsafeBufferPointer { cursor.put($0) }
        let millis = Int(time.tv_nsec / 1_000_000)
        cursor.put(UInt8(ascii: "."))
        cursor.put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: millis / 100))
        cursor.put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: millis / 10 % 10))
        cursor.put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: millis % 10))
        cursor.put(UInt8(ascii: "Z"))
    }

    private mutating func format(_ second: Int) {
        let time = CivilTime(epochSeconds: second)
        prefix.removeAll(keepingCapacity: true)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                prefix.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / divisor % 10))
                divisor /= 10
            }
        }
        digits(time.year, 4)
        prefix.append(UInt8(ascii: "-"))
        digits(time.month, 2)
        prefix.append(UInt8(ascii: "-"))
        digits(time.day, 2)
        prefix.append(UInt8(ascii: "T"))
        digits(time.hour, 2)
        prefix.append(UInt8(ascii: ":"))
        digits(time.minute, 2)
        prefix.append(UInt8(ascii: ":"))
        digits(time.second, 2)
        self.second = second
    }
}
