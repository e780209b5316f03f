import AmodbDynamicLibrary

/// The functions of libbrotlienc and libbrotlidec (RFC 7932) that `Brotli` calls, taken
/// from the system's `libbrotlienc.so.1` and `libbrotlidec.so.1` (Debian libbrotli1) at run
/// time: no brotli header or `-dev` package is needed to build, and where the library is
/// missing br is simply not made (`ContentEncoder.codings`), so it is never offered. The one
/// place that declares them; each is written with its C declaration (brotli 1.0), which its
/// Swift type must match, since nothing checks it.
///
/// Brotli's states stay opaque here (`OpaquePointer`); its enums and `BROTLI_BOOL` are C
/// `int`s, whose values are the constants below.
final class LibBrotli: Sendable {
    /// The encoder's file names tried, in order.
    static let encoderFileNames = ["libbrotlienc.so.1"]
    /// The decoder's file names tried, in order.
    static let decoderFileNames = ["libbrotlidec.so.1"]
    /// The Debian package that installs both.
    static let package = "libbrotli1"

    /// The process's brotli, loaded once, or why it could not be.
    static let system = Result { () throws(DynamicLibraryError) in
        try LibBrotli(encoderFileNames: encoderFileNames, decoderFileNames: decoderFileNames)
    }

    /// `BROTLI_TRUE`.
    static let brotliTrue: Int32 = 1
    /// `BROTLI_MODE_TEXT` of `BrotliEncoderMode`: tuned for UTF-8 text such as JSON.
    static let modeText: Int32 = 1
    /// `BROTLI_DECODER_RESULT_SUCCESS` of `BrotliDecoderResult`.
    static let resultSuccess: Int32 = 1
    /// `BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT`.
    static let resultNeedsMoreInput: Int32 = 2
    /// `BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT`.
    static let resultNeedsMoreOutput: Int32 = 3
    /// The `BrotliDecoderErrorCode`s of a failed allocation, `BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES`
    /// (-30) to `BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES` (-21): brotli failing, not the body.
    static let allocationFailures: ClosedRange<Int32> = -30 ... -21

    /// `size_t BrotliEncoderMaxCompressedSize(size_t input_size)`
    let BrotliEncoderMaxCompressedSize: @convention(c) (Int) -> Int
    /// `BROTLI_BOOL BrotliEncoderCompress(int quality, int lgwin, BrotliEncoderMode mode,
    /// size_t input_size, const uint8_t input_buffer[], size_t *encoded_size, uint8_t encoded_buffer[])`
    let BrotliEncoderCompress:
        @convention(c) (
            Int32, Int32, Int32, Int, UnsafePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<UInt8>?
        ) -> Int32
    /// `BrotliDecoderState *BrotliDecoderCreateInstance(brotli_alloc_func alloc_func,
    /// brotli_free_func free_func, void *opaque)`: only ever called with three nulls (malloc and free).
    let BrotliDecoderCreateInstance:
        @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutableRawPointer?) -> OpaquePointer?
    /// `void BrotliDecoderDestroyInstance(BrotliDecoderState *state)`
    let BrotliDecoderDestroyInstance: @convention(c) (OpaquePointer?) -> Void
    /// `BrotliDecoderResult BrotliDecoderDecompressStream(BrotliDecoderState *state,
    /// size_t *available_in, const uint8_t **next_in, size_t *available_out, uint8_t **next_out,
    /// size_t *total_out)`
    let BrotliDecoderDecompressStream:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
            UnsafeMutablePointer<Int>?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int>?
        ) -> Int32
    /// `BrotliDecoderErrorCode BrotliDecoderGetErrorCode(const BrotliDecoderState *state)`
    let BrotliDecoderGetErrorCode: @convention(c) (OpaquePointer?) -> Int32

    /// Opens the encoder and the decoder and takes every function above from them; throws,
    /// naming the package to install, when a library or a function is missing. br is made
    /// only with both: an answer the proxy could not read back is not one it sends.
    init(encoderFileNames: [String], decoderFileNames: [String]) throws(DynamicLibraryError) {
        let encoder = try DynamicLibrary(fileNames: encoderFileNames, package: Self.package)
        let decoder = try DynamicLibrary(fileNames: decoderFileNames, package: Self.package)
        BrotliEncoderMaxCompressedSize = try encoder.function("BrotliEncoderMaxCompressedSize")
        BrotliEncoderCompress = try encoder.function("BrotliEncoderCompress")
        BrotliDecoderCreateInstance = try decoder.function("BrotliDecoderCreateInstance")
        BrotliDecoderDestroyInstance = try decoder.function("BrotliDecoderDestroyInstance")
        BrotliDecoderDecompressStream = try decoder.function("BrotliDecoderDecompressStream")
        BrotliDecoderGetErrorCode = try decoder.function("BrotliDecoderGetErrorCode")
    }
}
