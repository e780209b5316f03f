import Foundation
import Synchronization

/// A response as bytes for the wire: its head, serialized, and its body, which is a
/// slice of the response's own array (a cached body is referenced, never copied).
struct SerializedResponse {
    /// Status line, fields, framing and the blank line.
    var head: [UInt8]
    /// The body bytes to send after the head (empty for HEAD, 1xx, 204 and 304).
    var body: ArraySlice<UInt8>

    /// Head and body together.
    var count: Int { head.count + body.count }
}

/// Writes a response head and body as HTTP/1.1 bytes (RFC 9112 §4, §6). Bytes are
/// appended as they are, with no string built per answer: this runs for every hit.
enum ResponseSerializer {
    /// The status line of every status with a reason phrase, built once.
    private static let statusLines: [Int: [UInt8]] = {
        var lines: [Int: [UInt8]] = [:]
        for status in 100...599 where HTTPStatusText.reason(status) != "Unknown" {
            lines[status] = Array("HTTP/1.1 \(status) \(HTTPStatusText.reason(status))\r\n".utf8)
        }
        return lines
    }()

    /// The status line, fields and framing as bytes, and (unless `isHead`) the body to follow.
    static func serialize(_ response: HTTPResponse, isHead: Bool, closing: Bool, version: HTTPVersion) -> SerializedResponse {
        var output: [UInt8] = []
        output.reserveCapacity(320)
        if let line = statusLines[response.status] {
            output.append(contentsOf: line)
        } else {
            output.append(contentsOf: "HTTP/1.1 \(response.status) \(HTTPStatusText.reason(response.status))\r\n".utf8)
        }
        for (name, value) in response.headers
        where !name.caseInsensitiveEquals("Content-Length") && !name.caseInsensitiveEquals("Connection") {
            output.append(contentsOf: name.utf8)
            output.append(0x3A)   // ":"
            output.append(0x20)
            output.append(contentsOf: value.utf8)
            output.append(0x0D)
            output.append(0x0A)
        }
        output.append(contentsOf: HTTPDate.current)
        let hasBody = response.status >= 200 && response.status != 204 && response.status != 304
        if hasBody {
            output.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(response.body.count, to: &output)
            output.append(0x0D)
            output.append(0x0A)
        }
        if closing {
            output.append(contentsOf: "Connection: close\r\n".utf8)
        } else if version == .http1_0 {
            output.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        output.append(0x0D)
        output.append(0x0A)
        guard hasBody, !isHead else { return SerializedResponse(head: output, body: []) }
        let length = min(response.abortsAfterBodyBytes ?? response.body.count, response.body.count)
        return SerializedResponse(head: output, body: response.body[..<length])
    }

    /// Appends a non-negative number's decimal digits.
    private static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        guard value >= 10 else {
            output.append(0x30 + UInt8(max(0, value)))
            return
        }
        appendDecimal(value / 10, to: &output)
        output.append(0x30 + UInt8(value % 10))
    }
}

/// The `Date` field (RFC 9110 §6.6.1), formatted at most once a second for all connections.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, field: [UInt8])>((-1, []))

    /// `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for the current second.
    static var current: [UInt8] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = now.tv_sec
        return cache.withLock { cached in
            if cached.second == second { return cached.field }
            cached = (second, Array("Date: \(format(epochSeconds: second))\r\n".utf8))
            return cached.field
        }
    }

    /// An IMF-fixdate for seconds since 1970.
    static func format(epochSeconds: Int) -> String {
        var time = time_t(epochSeconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
