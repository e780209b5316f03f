/// What the readers ask of a span of bytes that `Span` itself does not offer (it is not a
/// `Collection`): searching, testing every byte, passing over whole words, and making a
/// `String` or an `Array` of them. Every reader in the package reads bytes as `Span`s
/// through these, so the only pointers behind them are here: each loop checks its range
/// against the span's bounds once, then reads within it without a check per byte (these
/// run over every byte of a request line and of a query).
extension Span where Element == UInt8 {
    /// The first index in `start..<end` (the span's end when `nil`) holding `byte`.
    @inlinable @inline(__always)
    public func firstIndex(of byte: UInt8, from start: Int = 0, to end: Int? = nil) -> Int? {
        let end = end ?? count
        precondition(start >= 0 && end <= count, "a search past the span's bounds")
        return withUnsafeBufferPointer { bytes in
            var index = start
            while index < end {
                if bytes[index] == byte { return index }
                index &+= 1
            }
            return nil
        }
    }

    /// The last index holding `byte`.
    @inlinable @inline(__always)
    public func lastIndex(of byte: UInt8) -> Int? {
        withUnsafeBufferPointer { bytes in
            var index = bytes.count
            while index > 0 {
                index &-= 1
                if bytes[index] == byte { return index }
            }
            return nil
        }
    }

    /// Whether some byte is `byte`.
    @inlinable @inline(__always)
    public func contains(_ byte: UInt8) -> Bool { firstIndex(of: byte) != nil }

    /// Whether every byte passes `test`.
    @inlinable @inline(__always)
    public func allSatisfy(_ test: (UInt8) -> Bool) -> Bool {
        withUnsafeBufferPointer { bytes in
            for index in 0..<bytes.count where !test(bytes[index]) { return false }
            return true
        }
    }

    /// Whether the bytes are exactly `other`'s.
    @inlinable @inline(__always)
    public func elementsEqual(_ other: some Sequence<UInt8>) -> Bool {
        var index = 0
        for byte in other {
            guard index < count, self[index] == byte else { return false }
            index &+= 1
        }
        return index == count
    }

    /// Whether the bytes are exactly `other`'s.
    @inlinable @inline(__always)
    public func elementsEqual(_ other: Span<UInt8>) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBufferPointer { bytes in
            other.withUnsafeBufferPointer { other in
                for index in 0..<bytes.count where bytes[index] != other[index] { return false }
                return true
            }
        }
    }

    /// The index from which a byte below `limit` (at most 128) may be found in
    /// `start..<end`: `start` moved on past whole words, sixteen then eight bytes at a time,
    /// in which no byte is below it. What is left (the word holding such a byte, or fewer
    /// than eight bytes before `end`) is for the caller to read byte by byte. A head's long
    /// field, a user's token, is most of its bytes: this is how they are passed over.
    @inlinable @inline(__always)
    public func skippingWords(withNoByteBelow limit: UInt8, from start: Int, to end: Int) -> Int {
        precondition(start >= 0 && end <= count, "a word scan past the span's bounds")
        // Loaded from the span's own memory: every load is within `start..<end`, checked above.
        return withUnsafeBytes { raw in
            var index = start
            while index &+ 16 <= end,
                !ASCIIBytes.hasByteBelow(
                    limit, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self))
            {
                index &+= 16
            }
            while index &+ 8 <= end,
                !ASCIIBytes.hasByteBelow(
                    limit, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self), 0xFFFF_FFFF_FFFF_FFFF)
            {
                index &+= 8
            }
            return index
        }
    }

    /// `start` moved on past whole words of printable ASCII (0x20 to 0x7E) before `end`,
    /// sixteen then eight bytes at a time; the rest is for the caller to read byte by byte.
    @inlinable @inline(__always)
    public func skippingWords(ofPrintableASCIIFrom start: Int, to end: Int) -> Int {
        precondition(start >= 0 && end <= count, "a word scan past the span's bounds")
        return withUnsafeBytes { raw in
            var index = start
            while index &+ 16 <= end,
                ASCIIBytes.isPrintableASCII(
                    raw.loadUnaligned(fromByteOffset: index, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self))
            {
                index &+= 16
            }
            while index &+ 8 <= end,
                ASCIIBytes.isPrintableASCII(
                    raw.loadUnaligned(fromByteOffset: index, as: UInt64.self), 0x2020_2020_2020_2020)
            {
                index &+= 8
            }
            return index
        }
    }

    /// The bytes read as UTF-8 (an invalid sequence becomes U+FFFD), copied into a `String`.
    @inlinable
    public func decodedString() -> String {
        withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes, as a `String` only when they are valid UTF-8.
    @inlinable
    public func validatedString() -> String? {
        withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
    }

    /// The bytes copied into an array.
    @inlinable
    public func array() -> [UInt8] {
        withUnsafeBufferPointer { Array($0) }
    }
}
