import AmodbBytes
import Glibc

/// A response as bytes for the wire: its head, serialized, and its body, which is a
/// slice of the response's own array (a cached body is referenced, never copied).
struct SerializedResponse {
    /// Status line, fields, framing and the blank line.
    var head: ArraySlice<UInt8>
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

    /// `HTTP/1.1 200 OK\r\n`, the line of nearly every answer, without a table lookup.
    private static let okLine: StaticString = "HTTP/1.1 200 OK\r\n"

    /// The status line, fields and framing as bytes, and (unless `isHead`) the body to follow.
    /// The current second is read here (as of the clock's last tick), for the `Date` field.
    static func serialize(_ response: HTTPResponse, isHead: Bool, closing: Bool, version: HTTPVersion)
        -> SerializedResponse
    {
        serialize(response, isHead: isHead, closing: closing, version: version, now: Clocks.coarseEpochSeconds())
    }

    /// The same at `now` (seconds since 1970), which dates the answer.
    static func serialize(
        _ response: HTTPResponse, isHead: Bool, closing: Bool, version: HTTPVersion, now: Int
    ) -> SerializedResponse {
        var storage: [UInt8] = []
        return serialize(response, isHead: isHead, closing: closing, version: version, now: now, into: &storage)
    }

    /// The same, with the head written at the start of `storage` (grown when too short): a
    /// connection passes the array its previous head was written to. Once that head was
    /// sent and let go of, its storage is written over in place, and an answer allocates
    /// nothing for its head (an allocation would, for every answer, find the array's type
    /// and the allocator's bin); while it is still unsent, writing copies it first.
    ///
    /// The head is measured first, then written in one pass: one copy of each piece
    /// (appending piece by piece to an array cost a capacity and uniqueness check per piece).
    static func serialize(
        _ response: HTTPResponse, isHead: Bool, closing: Bool, version: HTTPVersion, now: Int,
        into storage: inout [UInt8]
    ) -> SerializedResponse {
        // 1xx, 204 and 304 carry no content (RFC 9110 §6.4.1), so none of the fields that
        // describe it: no Content-Length, and no Content-Encoding or Content-Type, though a
        // 304 names the coding of the variant it validates (RFC 9110 §15.4.5: a client that
        // reads a coding on a 304 tries to decode its empty body).
        let hasBody = response.status >= 200 && response.status != 204 && response.status != 304
        let coding = hasBody ? response.contentEncoding : nil
        // Every status but 200 takes its line from the table; 200 writes `okLine`.
        let statusLine = response.status == 200 ? nil : Self.statusLine(response.status)
        var size =
            (statusLine?.count ?? okLine.utf8CodeUnitCount) + response.renderedFields.count + HTTPDate.fieldLength + 2
        for (name, value) in response.headers where isWritten(name, hasBody: hasBody) {
            size += name.utf8.count + value.utf8.count + 4
        }
        if let coding { size += contentEncoding.utf8CodeUnitCount + coding.utf8.count + 2 }
        if hasBody { size += contentLength.utf8CodeUnitCount + ByteWriter.maxNumberBytes + 2 }
        if closing {
            size += connectionClose.utf8CodeUnitCount
        } else if version == .http1_0 {
            size += connectionKeepAlive.utf8CodeUnitCount
        }
        if storage.count < size {
            storage = [UInt8](repeating: 0, count: (size + storageGrain - 1) / storageGrain * storageGrain)
        }
        let written = ByteWriter.overwriting(&storage) { head in
            if let statusLine { head.write(statusLine) } else { head.write(okLine) }
            response.renderedFields.write(to: &head)
            for (name, value) in response.headers where isWritten(name, hasBody: hasBody) {
                head.write(name)
                head.write(": ")
                head.write(value)
                head.write("\r\n")
            }
            HTTPDate.write(epochSeconds: now, to: &head)
            if let coding {
                head.write(contentEncoding)
                head.write(coding)
                head.write("\r\n")
            }
            if hasBody { head.line(contentLength, number: response.body.count) }
            if closing {
                head.write(connectionClose)
            } else if version == .http1_0 {
                head.write(connectionKeepAlive)
            }
            head.write("\r\n")
            return head.count
        }
        guard hasBody, !isHead else { return SerializedResponse(head: storage[..<written], body: []) }
        var length = response.body.count
        if case .abortAfterBodyBytes(let sent) = response.connection { length = min(max(0, sent), length) }
        return SerializedResponse(head: storage[..<written], body: response.body[..<length])
    }

    /// Head storage is made in multiples of this: room for the head and for its neighbours
    /// a few digits longer (an `Age` that grows), without keeping much more than a head.
    private static let storageGrain = 64

    private static let contentEncoding: StaticString = "Content-Encoding: "
    private static let contentLength: StaticString = "Content-Length: "
    private static let connectionClose: StaticString = "Connection: close\r\n"
    private static let connectionKeepAlive: StaticString = "Connection: keep-alive\r\n"

    /// Whether a field of `HTTPResponse.headers` is written: not those the server writes
    /// itself, and, in an answer without content, none that would describe that content.
    private static func isWritten(_ name: String, hasBody: Bool) -> Bool {
        !name.caseInsensitiveEquals("Content-Length") && !name.caseInsensitiveEquals("Connection")
            && (hasBody
                || !name.caseInsensitiveEquals("Content-Type") && !name.caseInsensitiveEquals("Content-Encoding"))
    }

    /// The status line of a status other than 200, CRLF included: the table's, or built for a
    /// status without a reason phrase.
    private static func statusLine(_ status: Int) -> [UInt8] {
        statusLines[status] ?? Array("HTTP/1.1 \(status) \(HTTPStatusText.reason(status))\r\n".utf8)
    }
}

/// The `Date` field (RFC 9110 §6.6.1), written from the clock's seconds by arithmetic
/// (no `gmtime_r`, which takes glibc's time-zone lock) and kept for the rest of the second
/// by each thread for itself: the event loops share no cache and no lock for it.
enum HTTPDate {
    /// The field's length: `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n`.
    static let fieldLength = 37

    /// Writes `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for `epochSeconds`: this thread's
    /// copy when it is for the same second, else rendered into it first.
    static func write(epochSeconds: Int, to head: inout ByteWriter) {
        guard let kept = ThreadDate.current else {
            render(epochSeconds: epochSeconds, to: &head)
            return
        }
        if kept.second != epochSeconds {
            ByteWriter.overwriting(&kept.field) { render(epochSeconds: epochSeconds, to: &$0) }
            kept.second = epochSeconds
        }
        // Read while `kept` is known to live: the field is then copied from where it is,
        // without a retain of its own.
        withExtendedLifetime(kept) { head.write(kept.field) }
    }

    /// Writes the field for `epochSeconds` (`fieldLength` bytes). Years outside 0…9999 are
    /// clamped.
    static func render(epochSeconds: Int, to field: inout ByteWriter) {
        let time = CivilTime(epochSeconds: epochSeconds)
        field.write("Date: ")
        field.write(dayName(time.weekday))
        field.write(", ")
        field.write(decimal: time.day, width: 2)
        field.write(UInt8(ascii: " "))
        field.write(monthName(time.month))
        field.write(UInt8(ascii: " "))
        field.write(decimal: time.year, width: 4)
        field.write(UInt8(ascii: " "))
        field.write(decimal: time.hour, width: 2)
        field.write(UInt8(ascii: ":"))
        field.write(decimal: time.minute, width: 2)
        field.write(UInt8(ascii: ":"))
        field.write(decimal: time.second, width: 2)
        field.write(" GMT\r\n")
    }

    /// The day's name, 0 for Sunday (`CivilTime.weekday`).
    private static func dayName(_ weekday: Int) -> StaticString {
        switch weekday {
        case 0: "Sun"
        case 1: "Mon"
        case 2: "Tue"
        case 3: "Wed"
        case 4: "Thu"
        case 5: "Fri"
        default: "Sat"
        }
    }

    /// The month's name, 1 for January.
    private static func monthName(_ month: Int) -> StaticString {
        switch month {
        case 1: "Jan"
        case 2: "Feb"
        case 3: "Mar"
        case 4: "Apr"
        case 5: "May"
        case 6: "Jun"
        case 7: "Jul"
        case 8: "Aug"
        case 9: "Sep"
        case 10: "Oct"
        case 11: "Nov"
        default: "Dec"
        }
    }
}
