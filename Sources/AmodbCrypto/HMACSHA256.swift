/// HMAC with SHA-256 (RFC 2104, FIPS 180-4), computed by the system's libcrypto. It holds
/// its key, so its description, debug description and mirror are redacted, as a secret's are.
public struct HMACSHA256: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Bytes in an authentication code.
    public static let byteCount = 32

    private let key: [UInt8]

    /// An HMAC keyed with `key`, of any length (RFC 2104 hashes a key longer than a block first).
    public init(key: some Sequence<UInt8>) {
        self.key = Array(key)
    }

    /// The authentication code of `message`: `byteCount` bytes.
    public func authenticationCode(for message: some Sequence<UInt8>) -> [UInt8] {
        let message = Array(message)
        precondition(key.count <= Int(Int32.max), "an HMAC key longer than libcrypto takes")
        var code = [UInt8](repeating: 0, count: Self.byteCount)
        var written: UInt32 = 0
        let made = Self.withAddress(of: key) { key, keyCount in
            Self.withAddress(of: message) { message, messageCount in
                code.withUnsafeMutableBufferPointer { code in
                    libcrypto.HMAC(
                        libcrypto.EVP_sha256(), key, Int32(keyCount), message, messageCount, code.baseAddress, &written)
                        != nil
                }
            }
        }
        // Only a broken libcrypto installation fails here: no input makes SHA-256 fail.
        precondition(made && written == UInt32(Self.byteCount), "libcrypto could not compute HMAC-SHA256")
        return code
    }

    /// Whether `code` is `message`'s authentication code, compared in constant time.
    public func isAuthenticationCode(_ code: some Collection<UInt8>, of message: some Sequence<UInt8>) -> Bool {
        ConstantTime.equals(code, authenticationCode(for: message))
    }

    /// `bytes`' address and count. An empty array may have no address, and libcrypto reads a
    /// null key as "keep the previous key" and a null message as an error, so one byte
    /// that is never read stands in.
    private static func withAddress<Result>(of bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> Result) -> Result
    {
        bytes.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress { return body(base, buffer.count) }
            let none: UInt8 = 0
            return withUnsafePointer(to: none) { body($0, 0) }
        }
    }

    public var description: String { "HMACSHA256(<redacted>)" }
    public var debugDescription: String { "HMACSHA256(<redacted>)" }
    /// No children: `dump` and reflection show nothing of the key.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
