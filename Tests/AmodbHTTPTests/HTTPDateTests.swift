import AmodbBytes
import Glibc
import Testing

@testable import AmodbHTTP

/// The `Date` field is written by arithmetic, with no String, lock or `gmtime_r`: it must read
/// exactly as the C library writes it.
struct HTTPDateTests {
    @Test(
        "The Date field is the IMF-fixdate gmtime gives",
        arguments: [
            0, 59, 86_399, 86_400, -1, -86_401, 784_111_777, 951_782_400, 951_868_799, 978_307_200, 1_709_164_800,
            1_800_000_000, 4_102_444_799, 4_107_542_400, 253_402_300_799,
        ] + (0..<200).map { $0 * 19_999_999 + 12_345 })
    func datesAreFormattedAsGmtimeDoes(second: Int) {
        var output: [UInt8] = []
        ByteWriter.append(to: &output, atMost: HTTPDate.fieldLength) { HTTPDate.write(epochSeconds: second, to: &$0) }
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let expected =
            "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
        #expect(String(decoding: output, as: UTF8.self) == expected)
    }

    @Test(
        "A thread's kept field is for the second asked, however seconds come",
        arguments: [
            [784_111_777, 784_111_777, 784_111_778, 784_111_777, 784_198_177, 0, 0, -1, 784_111_777]
        ])
    func keptFieldsFollowTheSecond(seconds: [Int]) async {
        // Several threads at once, each with its own kept field.
        await withTaskGroup(of: Void.self) { group in
            for offset in 0..<8 {
                group.addTask {
                    for second in seconds.map({ $0 + offset }) {
                        var kept: [UInt8] = []
                        ByteWriter.append(to: &kept, atMost: HTTPDate.fieldLength) {
                            HTTPDate.write(epochSeconds: second, to: &$0)
                        }
                        var fresh: [UInt8] = []
                        ByteWriter.append(to: &fresh, atMost: HTTPDate.fieldLength) {
                            HTTPDate.render(epochSeconds: second, to: &$0)
                        }
                        #expect(kept == fresh)
                        #expect(fresh.count == HTTPDate.fieldLength)
                    }
                }
            }
        }
    }

    @Test("The clocks read the system's time: the coarse second is never ahead, at most a tick behind")
    func clocksReadTheSystemsTime() {
        var before = timespec()
        clock_gettime(CLOCK_REALTIME, &before)
        let coarse = Clocks.coarseEpochSeconds()
        var after = timespec()
        clock_gettime(CLOCK_REALTIME, &after)
        // A tick is at most 10 ms (HZ=100): the coarse second is this one or the one before.
        #expect(coarse <= after.tv_sec)
        #expect(coarse >= before.tv_sec - 1)

        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let first = Clocks.uptimeNanoseconds()
        let second = Clocks.uptimeNanoseconds()
        #expect(first >= UInt64(monotonic.tv_sec) * 1_000_000_000 + UInt64(monotonic.tv_nsec))
        #expect(second >= first)
        #expect(second - first < 1_000_000_000)
    }
}
