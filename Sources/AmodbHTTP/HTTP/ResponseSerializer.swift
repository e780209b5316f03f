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
        return withStatusLine(response.status) { statusLine in
            var size = statusLine.count + response.renderedFields.count + HTTPDate.fieldLength + 2
            for (name, value) in response.headers where isWritten(name, hasBody: hasBody) {
                size += name.utf8.count + value.utf8.count + 4
            }
            if let coding { size += contentEncoding.utf8CodeUnitCount + coding.utf8.count + 2 }
            if hasBody { size += contentLength.utf8CodeUnitCount + 20 + 2 }
            if closing {
                size += connectionClose.utf8CodeUnitCount
            } else if version == .http1_0 {
                size += connectionKeepAlive.utf8CodeUnitCount
            }
            // The closure reaches the response through a pointer: captured, it was retained
            // and released around the call (a pair for each of its arrays, every answer).
            if storage.count < size {
                storage = [UInt8](repeating: 0, count: (size + storageGrain - 1) / storageGrain * storageGrain)
            }
            let written = withUnsafePointer(to: response) { response in
                storage.withUnsafeMutableBufferPointer { buffer in
                    var head = RenderedFields.Writer(into: buffer)
                    head.write(statusLine)
                    response.pointee.renderedFields.write(to: &head)
                    for (name, value) in response.pointee.headers where isWritten(name, hasBody: hasBody) {
                        head.write(name)
                        head.write(": ")
                        head.write(value)
                        head.write("\r\n")
                    }
                    HTTPDate.withField(epochSeconds: now) { head.write(UnsafeRawBufferPointer($0)) }
                    if let coding {
                        head.write(contentEncoding)
                        head.write(coding)
                        head.write("\r\n")
                    }
                    if hasBody { head.line(contentLength, number: response.pointee.body.count) }
                    if closing {
                        head.write(connectionClose)
                    } else if version == .http1_0 {
                        head.write(connectionKeepAlive)
                    }
                    head.write("\r\n")
                    return head.count
                }
            }
            guard hasBody, !isHead else { return SerializedResponse(head: storage[..<written], body: []) }
            var length = response.body.count
            if case .abortAfterBodyBytes(let sent) = response.connection { length = min(max(0, sent), length) }
            return SerializedResponse(head: storage[..<written], body: response.body[..<length])
        }
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

    /// Calls `body` with the status line's bytes, CRLF included.
    private static func withStatusLine<R>(_ status: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if status == 200 {
            return body(UnsafeRawBufferPointer(start: okLine.utf8Start, count: okLine.utf8CodeUnitCount))
        }
        if let line = statusLines[status] {
            return line.withUnsafeBytes(body)
        }
        return Array("HTTP/1.1 \(status) \(HTTPStatusText.reason(status))\r\n".utf8).withUnsafeBytes(body)
    }
}

/// The `Date` field (RFC 9110 §6.6.1), written from the clock's seconds by arithmetic
/// (no `gmtime_r`, which takes glibc's time-zone lock) and kept for the rest of the second
/// by each thread for itself: the event loops share no cache and no lock for it.
enum HTTPDate {
    /// The field's length: `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n`.
    static let fieldLength = 37

    /// Calls `body` with `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for `epochSeconds`: this
    /// thread's copy when it is for the same second, else rendered into it first.
    static func withField<R>(epochSeconds: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard let cached = ThreadDate.current else {
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: fieldLength) { field in
                render(epochSeconds: epochSeconds, into: field)
                return body(UnsafeBufferPointer(field))
            }
        }
        if cached.second != epochSeconds {
            render(epochSeconds: epochSeconds, into: cached.field)
            cached.second = epochSeconds
        }
        return body(UnsafeBufferPointer(cached.field))
    }

    /// Writes the field for `epochSeconds` into `field` (`fieldLength` bytes). Years outside
    /// 0…9999 are clamped.
    static func render(epochSeconds: Int, into field: UnsafeMutableBufferPointer<UInt8>) {
        let time = CivilTime(epochSeconds: epochSeconds)
        copy("Date: ", into: field, at: 0)
        copy(dayNames, range: time.weekday * 3, count: 3, into: field, at: 6)
        field[9] = UInt8(ascii: ",")
        field[10] = UInt8(ascii: " ")
        two(time.day, into: field, at: 11)
        field[13] = UInt8(ascii: " ")
        copy(monthNames, range: (time.month - 1) * 3, count: 3, into: field, at: 14)
        field[17] = UInt8(ascii: " ")
        two(time.year / 100, into: field, at: 18)
        two(time.year % 100, into: field, at: 20)
        field[22] = UInt8(ascii: " ")
        two(time.hour, into: field, at: 23)
        field[25] = UInt8(ascii: ":")
        two(time.minute, into: field, at: 26)
        field[28] = UInt8(ascii: ":")
        two(time.second, into: field, at: 29)
        copy(" GMT\r\n", into: field, at: 31)
    }

    private static let dayNames: StaticString = "SunMonTueWedThuFriSat"
    private static let monthNames: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"

    private static func two(_ value: Int, into field: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
        field[index] = UInt8(ascii: "0") + UInt8(value / 10)
        field[index + 1] = UInt8(ascii: "0") + UInt8(value % 10)
    }

    private static func copy(_ text: StaticString, into field: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
        copy(text, range: 0, count: text.utf8CodeUnitCount, into: field, at: index)
    }

    private static func copy(
        _ text: StaticString, range start: Int, count: Int, into field: UnsafeMutableBufferPointer<UInt8>, at index: Int
    ) {
        for offset in 0..<count {
            field[index + offset] = text.utf8Start[start + offset]
        }
    }
}
