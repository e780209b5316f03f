import AmodbBytes
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
        ByteWriter.append(to: &bytes, atMost: length) { time.write(to: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Bytes one time takes.
    static let length = 24

    /// Writes the time now (`CLOCK_REALTIME`, UTC, milliseconds).
    mutating func write(to writer: inout ByteWriter) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        write(time, to: &writer)
    }

    /// Writes `time`, reformatting the calendar part only when its second changed.
    mutating func write(_ time: timespec, to writer: inout ByteWriter) {
        let second = Int(time.tv_sec)
        if second != self.second { format(second) }
        writer.write(prefix)
        writer.write(UInt8(ascii: "."))
        writer.write(decimal: Int(time.tv_nsec / 1_000_000), width: 3)
        writer.write(UInt8(ascii: "Z"))
    }

    private mutating func format(_ second: Int) {
        let time = CivilTime(epochSeconds: second)
        prefix.removeAll(keepingCapacity: true)
        ByteWriter.append(to: &prefix, atMost: 19) { text in
            text.write(decimal: time.year, width: 4)
            text.write(UInt8(ascii: "-"))
            text.write(decimal: time.month, width: 2)
            text.write(UInt8(ascii: "-"))
            text.write(decimal: time.day, width: 2)
            text.write(UInt8(ascii: "T"))
            text.write(decimal: time.hour, width: 2)
            text.write(UInt8(ascii: ":"))
            text.write(decimal: time.minute, width: 2)
            text.write(UInt8(ascii: ":"))
            text.write(decimal: time.second, width: 2)
        }
        self.second = second
    }
}
