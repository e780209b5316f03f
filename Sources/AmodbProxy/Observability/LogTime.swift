import Glibc
import Synchronization

/// `2026-11-29T20:39:05.123Z` for log lines, the date part formatted once a second.
enum LogTime {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static var now: String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let second = time.tv_sec
        let prefix = cache.withLock { cached -> String in
            if cached.second == second { return cached.text }
            var seconds = time_t(second)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            func pad(_ value: Int32, _ width: Int) -> String {
                let text = String(value)
                return String(repeating: "0", count: max(0, width - text.count)) + text
            }
            cached = (second, "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
                + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))")
            return cached.text
        }
        let millis = time.tv_nsec / 1_000_000
        return prefix + "." + (millis < 10 ? "00" : millis < 100 ? "0" : "") + String(millis) + "Z"
    }
}
