/// SHA-256 (FIPS 180-4), computed by the system's libcrypto.
public enum SHA256 {
    /// Bytes in a digest.
    public static let byteCount = 32

    /// The digest of `message`: `byteCount` bytes.
    public static func hash(_ message: some Sequence<UInt8>) -> [UInt8] {
        let message = Array(message)
        var digest = [UInt8](repeating: 0, count: byteCount)
        var written: UInt32 = 0
        let made = message.withUnsafeBufferPointer { message in
            digest.withUnsafeMutableBufferPointer { digest in
                // EVP_Digest reads nothing when the count is 0, so an empty message's
                // missing address is never followed.
                libcrypto.EVP_Digest(
                    message.baseAddress, message.count, digest.baseAddress, &written, libcrypto.EVP_sha256(), nil)
            }
        }
        // Only a broken libcrypto installation fails here: no input makes SHA-256 fail.
        precondition(made == 1 && written == UInt32(byteCount), "libcrypto could not compute SHA-256")
        return digest
    }
}
