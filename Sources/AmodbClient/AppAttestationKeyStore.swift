import Foundation

/// Keeps the id of the App Attest key the proxy has accepted, across launches.
///
/// A key is attested once in its life (Apple's service attests a key once, and the proxy
/// accepts each key once), so its id must outlive the process: on Apple devices
/// ``KeychainAttestationKeyStore``. An id is saved only once the proxy has accepted the
/// key's attestation; it is not a secret (it is a hash of the key's public half), but it
/// belongs to this device's Secure Enclave and means nothing on another device.
public protocol AppAttestationKeyStore: Sendable {
    /// The id of the attested key, or `nil` when none is kept.
    func load() -> String?

    /// Keeps `keyID` in place of any earlier one; `nil` forgets the one kept.
    func save(_ keyID: String?)
}

/// An ``AppAttestationKeyStore`` that keeps the id in memory only: for tests, and for a
/// process that attests a key each time it starts (which Apple's service may throttle).
///
/// `@unchecked Sendable`: the id is read and written only under `lock`. An `NSLock` rather
/// than `Mutex` because the package still supports macOS 13, where `Mutex` is unavailable.
public final class InMemoryAttestationKeyStore: AppAttestationKeyStore, @unchecked Sendable {
    private let lock = NSLock()
    private var keyID: String?

    /// A store holding `keyID` (none by default).
    public init(keyID: String? = nil) {
        self.keyID = keyID
    }

    /// The id kept, if any.
    public func load() -> String? {
        lock.withLock { keyID }
    }

    /// Keeps `keyID`, or forgets the id when `nil`.
    public func save(_ keyID: String?) {
        lock.withLock { self.keyID = keyID }
    }
}
