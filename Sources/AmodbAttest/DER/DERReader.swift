/// A minimal DER reader (ITU-T X.690 §10) for the one structure App Attest needs read by
/// hand: the nonce extension's `SEQUENCE { [1] EXPLICIT OCTET STRING }`. Certificates
/// themselves are read by libcrypto. It reads one element at a time from bytes it was
/// given, with single-byte tags and definite lengths of at most four bytes, in their
/// shortest form (X.690 §10.1); anything else is refused.
struct DERReader {
    /// Why an element could not be read.
    enum Failure: Error, Equatable {
        /// The bytes end inside an element.
        case truncated
        /// A tag of more than one byte, an indefinite length, or a length not in its
        /// shortest form or longer than four bytes.
        case notDER
        /// An element with another tag than expected.
        case unexpectedTag
        /// Bytes are left after what was read.
        case trailingBytes
    }

    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    /// A reader at the start of `bytes`.
    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == bytes.endIndex }

    /// The next element's tag byte, without reading it; `nil` at the end.
    var nextTag: UInt8? { isAtEnd ? nil : bytes[offset] }

    /// The content of the next element, which must have `tag`.
    mutating func read(tag: UInt8) throws(Failure) -> ArraySlice<UInt8> {
        let (found, content) = try readElement()
        guard found == tag else { throw .unexpectedTag }
        return content
    }

    /// The next element's tag and content.
    mutating func readElement() throws(Failure) -> (tag: UInt8, content: ArraySlice<UInt8>) {
        guard let tag = nextTag else { throw .truncated }
        // 0x1F in the low bits: the tag number continues in later bytes (X.690 §8.1.2.4).
        guard tag & 0x1F != 0x1F else { throw .notDER }
        offset += 1
        let length = try readLength()
        guard length <= bytes.endIndex - offset else { throw .truncated }
        let content = bytes[offset..<offset + length]
        offset += length
        return (tag, content)
    }

    /// Fails unless every byte has been read.
    func expectEnd() throws(Failure) {
        guard isAtEnd else { throw .trailingBytes }
    }

    private mutating func readLength() throws(Failure) -> Int {
        guard offset < bytes.endIndex else { throw .truncated }
        let first = bytes[offset]
        offset += 1
        guard first & 0x80 != 0 else { return Int(first) }
        // 0x80 is the indefinite form, which DER forbids (X.690 §10.1).
        let count = Int(first & 0x7F)
        guard (1...4).contains(count) else { throw .notDER }
        guard count <= bytes.endIndex - offset else { throw .truncated }
        var length = 0
        for byte in bytes[offset..<offset + count] { length = length << 8 | Int(byte) }
        offset += count
        // Shortest form: no leading zero byte, and the long form only from 128 on.
        guard bytes[offset - count] != 0, length >= 0x80 else { throw .notDER }
        return length
    }
}
