/// What libcrypto refused when building or using a key (the parameters make no key it
/// takes), or that libcrypto itself could not be loaded (`CryptoLibrary.load()`).
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done, such as `an RSA public key from n and e`.
    public let description: String

    package init(_ description: String) {
        self.description = description
    }
}
