/// Bytes written into room someone else owns (a buffer on the stack, an array's storage), or
/// only counted: the one place where the project writes bytes through a pointer. The response
/// head, the fields a responder renders, the `Date` field and the log lines are all written
/// through here.
///
/// Every write checks that its bytes fit before it makes any of them (one comparison for a
/// byte, a copy, a number's digits), and stops the process rather than write past the room:
/// a writer whose room was sized wrong is a bug, and the memory past the room is not its own.
///
/// A counting writer (`counting`) writes nothing and adds up what it would write, a number at
/// its widest: a caller sizes its room by running its writes once counting, then writes them.
/// It fails the same comparison (its capacity is negative), so counting costs a write nothing.
///
/// Everything is `@inlinable` and public (the target is in no product, so nothing leaves the
/// package): a head and a log line are dozens of writes each on every request, and a
/// `package` function's body was measured not to be inlined into another module, a call per
/// write (docs/performance.md, "Invariants").
public struct ByteWriter {
    /// The room's first byte; `nil` while counting (and for an empty room): no write of a
    /// byte or more reads it then, as none fits.
    @usableFromInline let base: UnsafeMutableRawPointer?
    /// The room's size in bytes; -1 while counting, so that no write ever fits.
    @usableFromInline let capacity: Int
    /// Bytes written (or counted) so far.
    @usableFromInline var written = 0

    /// A writer into `room`, from its first byte.
    @inlinable @inline(__always)
    public init(into room: UnsafeMutableRawBufferPointer) {
        base = room.baseAddress
        capacity = room.count
    }

    /// A writer with no room, that counts (`counting`).
    @inlinable @inline(__always)
    init(countingOnly: Void) {
        base = nil
        capacity = -1
    }

    /// A writer that writes nothing and counts the bytes it is given.
    @inlinable
    public static var counting: ByteWriter { ByteWriter(countingOnly: ()) }

    /// Bytes written (or counted) so far.
    @inlinable
    public var count: Int { written }

    /// Whether this writer only counts.
    @inlinable
    public var isCounting: Bool { capacity < 0 }

    /// Bytes that can still be written before the end of the room; `Int.max` while counting.
    @inlinable
    public var remaining: Int { capacity < 0 ? .max : capacity - written }

    /// Most bytes `write(decimal:)` takes for an `Int` (20, `-9223372036854775808`): what a
    /// number counts for while counting. Computed, not stored: a constant needs no lazy
    /// initialisation in the module that inlines it.
    @inlinable
    public static var maxNumberBytes: Int { 20 }

    // MARK: - Writing into room of one's own

    /// Writes into temporary room of `capacity` bytes (on the stack unless it is large), then
    /// appends what `body` wrote to `bytes` with one copy: appending piece by piece to an
    /// array checks its capacity and uniqueness every time, which costs more than the pieces.
    @inlinable @inline(__always)
    public static func append<Result>(
        to bytes: inout [UInt8], atMost capacity: Int, _ body: (inout ByteWriter) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { room in
            var writer = ByteWriter(into: UnsafeMutableRawBufferPointer(room))
            let result = body(&writer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: room[..<writer.written]))
            return result
        }
    }

    /// A string of what `body` writes into room of `capacity` bytes, made in place (no copy
    /// of the bytes, no appends). The bytes are read as UTF-8 (an invalid sequence becomes
    /// U+FFFD), as `String(decoding:as:)` reads them.
    @inlinable @inline(__always)
    public static func string(atMost capacity: Int, _ body: (inout ByteWriter) -> Void) -> String {
        String(unsafeUninitializedCapacity: capacity) { room in
            var writer = ByteWriter(into: UnsafeMutableRawBufferPointer(room))
            body(&writer)
            return writer.written
        }
    }

    /// Writes over `bytes` from their start, within their count: an array kept to be written
    /// over again (a connection's head storage, a thread's `Date` field) allocates nothing.
    /// `bytes` is copied first if its storage is shared.
    @inlinable @inline(__always)
    public static func overwriting<Result>(_ bytes: inout [UInt8], _ body: (inout ByteWriter) -> Result) -> Result {
        bytes.withUnsafeMutableBytes { room in
            var writer = ByteWriter(into: room)
            return body(&writer)
        }
    }

    // MARK: - Writes

    /// Claims the next `count` bytes and calls `write` with where they start, once the room
    /// was checked to hold them; while counting, only counts them. This comparison is the
    /// bound of every write: nothing is written before it.
    @inlinable @inline(__always)
    mutating func claim(_ count: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
        if capacity &- written >= count {
            write(base.unsafelyUnwrapped + written)
        } else {
            precondition(capacity < 0, "ByteWriter: a write past the end of its room (its room was sized wrong)")
        }
        written &+= count
    }

    /// Writes one byte.
    @inlinable @inline(__always)
    public mutating func write(_ byte: UInt8) {
        claim(1) { $0.storeBytes(of: byte, as: UInt8.self) }
    }

    /// Writes bytes as they are. Most are short (a field's name, a label, an address), and a
    /// call to `memmove` for each cost more than the copy: up to 16 bytes are copied with two
    /// overlapping loads and stores, both loads before either store. `bytes` must not be in
    /// this writer's room.
    @inlinable @inline(__always)
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        guard count > 0 else { return }
        let source = bytes.baseAddress.unsafelyUnwrapped
        claim(count) { target in
            switch count {
            case 8...16:
                let head = source.loadUnaligned(as: UInt64.self)
                let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                target.storeBytes(of: head, as: UInt64.self)
                target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
            case 4..<8:
                let head = source.loadUnaligned(as: UInt32.self)
                let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                target.storeBytes(of: head, as: UInt32.self)
                target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
            case 0..<4:
                for index in 0..<count {
                    target.storeBytes(
                        of: source.load(fromByteOffset: index, as: UInt8.self), toByteOffset: index, as: UInt8.self)
                }
            default:
                target.copyMemory(from: source, byteCount: count)
            }
        }
    }

    /// Writes a literal's bytes (a name, constant text of a line).
    @inlinable @inline(__always)
    public mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes an array's bytes.
    @inlinable @inline(__always)
    public mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes an array slice's bytes.
    @inlinable @inline(__always)
    public mutating func write(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes a string's UTF-8 bytes: in place for a native string (no copy of it to get at
    /// its bytes). Counting, it takes the string's count without reading its bytes.
    ///
    /// Disfavoured, so that a literal is written as a `StaticString`, whose length is a
    /// constant where the write is inlined, rather than as a `String`, the default type of a
    /// literal.
    @inlinable @_disfavoredOverload
    public mutating func write(_ text: String) {
        guard capacity >= 0 else {
            written &+= text.utf8.count
            return
        }
        if text.utf8.withContiguousStorageIfAvailable({ write(UnsafeRawBufferPointer($0)) }) == nil {
            var text = text
            text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Writes `number`'s decimal digits, with a `-` when negative, straight into the room.
    /// Counting, it counts the most any `Int` takes (`maxNumberBytes`) without finding its
    /// digits: the count only sizes the room.
    @inlinable
    public mutating func write(decimal number: Int) {
        guard capacity >= 0 else {
            written &+= Self.maxNumberBytes
            return
        }
        var magnitude = number.magnitude
        // How many digits, so that they can be written from the right. A magnitude is at most
        // 2^63, so `bound` stops at 10^19, which a `UInt` holds.
        var digits = 1
        var bound: UInt = 10
        while magnitude >= bound {
            digits &+= 1
            bound &*= 10
        }
        let count = number < 0 ? digits &+ 1 : digits
        claim(count) { target in
            var index = count
            repeat {
                index &-= 1
                target.storeBytes(
                    of: 0x30 &+ UInt8(truncatingIfNeeded: magnitude % 10), toByteOffset: index, as: UInt8.self)
                magnitude /= 10
            } while magnitude > 0
            if number < 0 { target.storeBytes(of: 0x2D, as: UInt8.self) }
        }
    }

    /// Writes the last `width` decimal digits of `value`, zero-padded: the parts of a date or a
    /// time (`05`, `2026`), the thousandths of a number. `value` is from 0 to 10^width − 1.
    @inlinable @inline(__always)
    public mutating func write(decimal value: Int, width: Int) {
        claim(width) { target in
            var rest = UInt(bitPattern: value)
            var index = width
            while index > 0 {
                index &-= 1
                target.storeBytes(of: 0x30 &+ UInt8(truncatingIfNeeded: rest % 10), toByteOffset: index, as: UInt8.self)
                rest /= 10
            }
        }
    }

    /// Writes `text`'s UTF-8 bytes, those `needsEscape` picks through `escape` and the others
    /// as they are. Most text needs no escape: it is tested and copied eight bytes at a time
    /// (`anyNeedsEscape` tells whether any of eight bytes, loaded as one word, does), then byte
    /// by byte, up to the first byte that needs one; from there on, byte by byte.
    ///
    /// An escape takes at least the byte it stands for, so the room must hold the text's own
    /// bytes: that is checked once, before any is copied; each escape and each byte after the
    /// first escape is checked as it is written.
    @inlinable @inline(__always)
    public mutating func write(
        _ text: String, escaping needsEscape: (UInt8) -> Bool, words anyNeedsEscape: (UInt64) -> Bool,
        with escape: (UInt8, inout ByteWriter) -> Void
    ) {
        var text = text
        text.withUTF8 { bytes in
            let count = bytes.count
            var plain = 0
            if capacity >= 0, count > 0 {
                precondition(
                    capacity &- written >= count,
                    "ByteWriter: a write past the end of its room (its room was sized wrong)")
                let source = UnsafeRawPointer(bytes.baseAddress.unsafelyUnwrapped)
                let target = base.unsafelyUnwrapped + written
                while plain &+ 8 <= count {
                    let word = source.loadUnaligned(fromByteOffset: plain, as: UInt64.self)
                    if anyNeedsEscape(word) { break }
                    target.storeBytes(of: word, toByteOffset: plain, as: UInt64.self)
                    plain &+= 8
                }
                while plain < count {
                    let byte = bytes[plain]
                    if needsEscape(byte) { break }
                    target.storeBytes(of: byte, toByteOffset: plain, as: UInt8.self)
                    plain &+= 1
                }
                written &+= plain
            }
            for byte in bytes[plain...] {
                if needsEscape(byte) {
                    escape(byte, &self)
                } else {
                    write(byte)
                }
            }
        }
    }
}
