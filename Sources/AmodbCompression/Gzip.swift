import CZlib

/// zlib's deflate and inflate for gzip members (RFC 1952): the one home of the zlib
/// calls, each result mapped to a `CompressionError` here. zlib counts input in a
/// 32-bit `uInt`, so a body must be under 4 GiB (answers are kilobytes).
enum Gzip {
    /// How much inflate writes per call before the output is checked against the cap.
    static let chunkSize = 16 * 1024

    /// deflate(3) with `Z_FINISH` into a buffer of deflateBound(3)'s size: one call makes
    /// the whole member (header, deflate data, CRC32 and ISIZE trailer).
    static func encode(_ input: [UInt8], level: Int32) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        let start = amodb_deflate_init_gzip(&stream, level)
        guard start == Z_OK else { throw .libraryFailure(.gzip, code: start) }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
        let code = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        // deflateBound is an upper bound for Z_FINISH in one call, so anything but
        // Z_STREAM_END is zlib failing, not a short buffer.
        guard code == Z_STREAM_END else { throw .libraryFailure(.gzip, code: code) }
        output.removeLast(Int(stream.avail_out))
        return output
    }

    /// FLG's bits but FTEXT (RFC 1952 §2.3.1): FHCRC, FEXTRA, FNAME, FCOMMENT and the three
    /// reserved. FTEXT is a hint about the content; each of the others changes how the
    /// header is read.
    static let fieldFlags: UInt8 = 0xFE

    /// Whether `input` starts as a gzip member (ID1, ID2, CM 8) whose FLG announces an
    /// optional field or sets a reserved bit. Any other start is left to inflate to judge.
    static func announcesHeaderFields(_ input: [UInt8]) -> Bool {
        input.count >= 4 && input[0] == 0x1F && input[1] == 0x8B && input[2] == 8 && input[3] & fieldFlags != 0
    }

    /// inflate(3) chunk by chunk, refusing as soon as the output passes `limit`.
    /// With `.anyMembers`, concatenated members decode as one body, as gzip(1) reads them
    /// (RFC 1952 §2.2); with `.plainSingleMember`, header fields or bytes after the first
    /// member are `notPlainSingleMember`. zlib checks each member's CRC32 and ISIZE.
    static func decode(
        _ input: [UInt8], limit: Int, framing: ContentDecoder.GzipFraming
    ) throws(CompressionError) -> [UInt8] {
        if framing == .plainSingleMember && announcesHeaderFields(input) { throw .notPlainSingleMember(.gzip) }
        var stream = z_stream()
        let start = amodb_inflate_init_gzip(&stream)
        guard start == Z_OK else { throw .libraryFailure(.gzip, code: start) }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        let outcome = input.withUnsafeBufferPointer { source -> Result<Void, CompressionError> in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            while true {
                let (code, produced) = chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    let code = inflate(&stream, Z_NO_FLUSH)
                    return (code, target.count - Int(stream.avail_out))
                }
                guard output.count + produced <= limit else { return .failure(.outputTooLarge(.gzip, limit: limit)) }
                output.append(contentsOf: chunk[..<produced])
                switch code {
                case Z_OK:
                    continue
                case Z_STREAM_END where stream.avail_in == 0:
                    return .success(())
                case Z_STREAM_END where framing == .plainSingleMember:
                    // More bytes after the member: a client that reads one member stops here.
                    return .failure(.notPlainSingleMember(.gzip))
                case Z_STREAM_END:
                    // More bytes after a member: another member, or garbage inflate refuses.
                    inflateReset(&stream)
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return .failure(.truncated(.gzip))
                case Z_MEM_ERROR:
                    return .failure(.libraryFailure(.gzip, code: code))
                default:
                    return .failure(.malformed(.gzip))
                }
            }
        }
        try outcome.get()
        return output
    }
}
