/// Why a body could not be encoded or decoded. A struct over a private enum, so that
/// new cases do not break callers; each error names the coding it concerns.
public struct CompressionError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable {
        case truncated
        case malformed
        case outputTooLarge(limit: Int)
        case libraryFailure(code: Int32)
        case notPlainSingleMember
        case unavailable
    }

    private let kind: Kind

    /// The coding being encoded or decoded.
    public let coding: ContentCoding

    private init(_ kind: Kind, _ coding: ContentCoding) {
        self.kind = kind
        self.coding = coding
    }

    /// The compressed body ended before its stream did (a cut-off transfer).
    public static func truncated(_ coding: ContentCoding) -> CompressionError {
        CompressionError(.truncated, coding)
    }

    /// The body is not a valid stream of its coding: bad header, corrupt data, a wrong
    /// checksum or length, or bytes after the end of the stream.
    public static func malformed(_ coding: ContentCoding) -> CompressionError {
        CompressionError(.malformed, coding)
    }

    /// Decoding would produce more than `limit` bytes: refused before it is all
    /// inflated, so a small compressed bomb cannot take the memory.
    public static func outputTooLarge(_ coding: ContentCoding, limit: Int) -> CompressionError {
        CompressionError(.outputTooLarge(limit: limit), coding)
    }

    /// The library could not start or run (out of memory): `code` is zlib's or brotli's.
    public static func libraryFailure(_ coding: ContentCoding, code: Int32) -> CompressionError {
        CompressionError(.libraryFailure(code: code), coding)
    }

    /// A gzip body read strictly (`ContentDecoder.GzipFraming.plainSingleMember`) has an
    /// optional header field or a reserved flag, or bytes after its first member's trailer:
    /// valid or not, a client that reads one member might read it otherwise than gzip(1).
    public static func notPlainSingleMember(_ coding: ContentCoding) -> CompressionError {
        CompressionError(.notPlainSingleMember, coding)
    }

    /// The coding's library is not installed here (br without libbrotli1): the body was
    /// neither made nor read, whatever it holds.
    public static func unavailable(_ coding: ContentCoding) -> CompressionError {
        CompressionError(.unavailable, coding)
    }

    /// What happened, for logs and error messages.
    public var description: String {
        switch kind {
        case .truncated: "\(coding) body ends before its stream does"
        case .malformed: "\(coding) body is not a valid \(coding) stream"
        case .outputTooLarge(let limit): "\(coding) body decodes to more than \(limit) bytes"
        case .libraryFailure(let code): "\(coding) library failed (code \(code))"
        case .notPlainSingleMember: "\(coding) body is not one member without optional header fields"
        case .unavailable: "\(coding) library is not installed here"
        }
    }
}
