import CBrotli

/// libbrotlienc and libbrotlidec (RFC 7932): the one home of the brotli calls, each
/// result mapped to a `CompressionError` here.
enum Brotli {
    /// How much the decoder writes per call before the output is checked against the cap.
    static let chunkSize = 16 * 1024

    /// BrotliEncoderCompress(3): the whole body in one call, into a buffer of
    /// BrotliEncoderMaxCompressedSize's size (which it cannot outgrow: brotli falls back
    /// to stored blocks). Large windows stay off: RFC 7932 decoders need not read them.
    static func encode(_ input: [UInt8], quality: Int32, windowBits: Int32, mode: BrotliEncoderMode)
        throws(CompressionError) -> [UInt8]
    {
        let bound = BrotliEncoderMaxCompressedSize(input.count)
        guard bound > 0 else { throw .libraryFailure(.br, code: 0) }
        var output = [UInt8](repeating: 0, count: bound)
        var size = bound
        let succeeded = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                BrotliEncoderCompress(
                    quality, windowBits, mode, source.count, source.baseAddress, &size, target.baseAddress)
            }
        }
        guard succeeded == BROTLI_TRUE else { throw .libraryFailure(.br, code: succeeded) }
        output.removeLast(bound - size)
        return output
    }

    /// BrotliDecoderDecompressStream(3) chunk by chunk, refusing as soon as the output
    /// passes `limit`. Bytes after the end of the stream make the body malformed.
    static func decode(_ input: [UInt8], limit: Int) throws(CompressionError) -> [UInt8] {
        guard let decoder = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw .libraryFailure(.br, code: 0)
        }
        defer { BrotliDecoderDestroyInstance(decoder) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        let outcome = input.withUnsafeBufferPointer { source -> Result<Void, CompressionError> in
            var availableIn = source.count
            var nextIn = source.baseAddress
            while true {
                let (result, produced) = chunk.withUnsafeMutableBufferPointer { target in
                    var availableOut = target.count
                    var nextOut = target.baseAddress
                    let result = BrotliDecoderDecompressStream(
                        decoder, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    return (result, target.count - availableOut)
                }
                guard output.count + produced <= limit else { return .failure(.outputTooLarge(.br, limit: limit)) }
                output.append(contentsOf: chunk[..<produced])
                switch result {
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                case BROTLI_DECODER_RESULT_SUCCESS where availableIn == 0:
                    return .success(())
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    return .failure(.truncated(.br))
                default:
                    let code = BrotliDecoderGetErrorCode(decoder).rawValue
                    // Out of memory is brotli failing (codes -21 to -30), not the body.
                    let allocationFailures =
                        BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES
                        .rawValue...BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES.rawValue
                    if allocationFailures.contains(code) {
                        return .failure(.libraryFailure(.br, code: code))
                    }
                    return .failure(.malformed(.br))
                }
            }
        }
        try outcome.get()
        return output
    }
}
