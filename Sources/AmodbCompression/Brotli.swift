/// libbrotlienc and libbrotlidec (RFC 7932), as loaded at run time (`LibBrotli`): the one
/// home of the brotli calls, each result mapped to a `CompressionError` here.
struct Brotli: Sendable {
    /// How much the decoder writes per call before the output is checked against the cap.
    static let chunkSize = 16 * 1024

    /// The process's brotli, or `nil` where libbrotli1 is not installed.
    static let system: Brotli? = try? Brotli(library: LibBrotli.system.get())

    /// Why the process has no brotli (which package to install, and what loading it said),
    /// or `nil` when it has.
    static var unavailability: String? {
        switch LibBrotli.system {
        case .success: nil
        case .failure(let error): error.description
        }
    }

    /// The library's functions.
    let library: LibBrotli

    /// BrotliEncoderCompress(3): the whole body in one call, into a buffer of
    /// BrotliEncoderMaxCompressedSize's size (which it cannot outgrow: brotli falls back
    /// to stored blocks). Large windows stay off: RFC 7932 decoders need not read them.
    /// `mode` is a `BrotliEncoderMode` (`LibBrotli.modeText`).
    func encode(_ input: [UInt8], quality: Int32, windowBits: Int32, mode: Int32) throws(CompressionError) -> [UInt8] {
        let bound = library.BrotliEncoderMaxCompressedSize(input.count)
        guard bound > 0 else { throw .libraryFailure(.br, code: 0) }
        var output = [UInt8](repeating: 0, count: bound)
        var size = bound
        let succeeded = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                library.BrotliEncoderCompress(
                    quality, windowBits, mode, source.count, source.baseAddress, &size, target.baseAddress)
            }
        }
        guard succeeded == LibBrotli.brotliTrue else { throw .libraryFailure(.br, code: succeeded) }
        output.removeLast(bound - size)
        return output
    }

    /// BrotliDecoderDecompressStream(3) chunk by chunk, refusing as soon as the output
    /// passes `limit`. Bytes after the end of the stream make the body malformed.
    func decode(_ input: [UInt8], limit: Int) throws(CompressionError) -> [UInt8] {
        guard let decoder = library.BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw .libraryFailure(.br, code: 0)
        }
        defer { library.BrotliDecoderDestroyInstance(decoder) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        let outcome = input.withUnsafeBufferPointer { source -> Result<Void, CompressionError> in
            var availableIn = source.count
            var nextIn = source.baseAddress
            while true {
                let (result, produced) = chunk.withUnsafeMutableBufferPointer { target in
                    var availableOut = target.count
                    var nextOut = target.baseAddress
                    let result = library.BrotliDecoderDecompressStream(
                        decoder, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    return (result, target.count - availableOut)
                }
                guard output.count + produced <= limit else { return .failure(.outputTooLarge(.br, limit: limit)) }
                output.append(contentsOf: chunk[..<produced])
                switch result {
                case LibBrotli.resultNeedsMoreOutput:
                    continue
                case LibBrotli.resultSuccess where availableIn == 0:
                    return .success(())
                case LibBrotli.resultNeedsMoreInput:
                    return .failure(.truncated(.br))
                default:
                    let code = library.BrotliDecoderGetErrorCode(decoder)
                    // Out of memory is brotli failing, not the body.
                    if LibBrotli.allocationFailures.contains(code) {
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
