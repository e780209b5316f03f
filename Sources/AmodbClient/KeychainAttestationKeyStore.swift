#if canImport(DeviceCheck)
    import Foundation
    import Security

    /// An ``AppAttestationKeyStore`` in the keychain: one generic password item, by service
    /// and account, holding the key id's UTF-8 bytes.
    ///
    /// The item is `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: the key itself lives in
    /// this device's Secure Enclave, so its id must not reach another device through a
    /// backup or iCloud Keychain, and a refresh in the background (after the first unlock)
    /// must still read it. A keychain item can outlive the app (a reinstall) while the key
    /// does not: the provider then reports the key invalid and ``AppAttestSession`` makes a
    /// new one. A save the keychain refuses is not an error here: the session goes on with
    /// the key in hand, and the next launch attests a new key.
    public struct KeychainAttestationKeyStore: AppAttestationKeyStore {
        /// The item's `kSecAttrService`.
        public let service: String
        /// The item's `kSecAttrAccount`.
        public let account: String

        /// A store for the item `service`/`account`; the defaults suit an app with one proxy.
        public init(service: String = "amodb-proxy.app-attest", account: String = "key-id") {
            self.service = service
            self.account = account
        }

        /// `SecItemCopyMatching`: the id kept, or `nil` when there is none (or it cannot be read).
        public func load() -> String? {
            var query = itemQuery
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess,
                let data = result as? Data
            else { return nil }
            return String(data: data, encoding: .utf8)
        }

        /// `SecItemDelete`, then `SecItemAdd` of `keyID` unless it is `nil`.
        public func save(_ keyID: String?) {
            _ = SecItemDelete(itemQuery as CFDictionary)
            guard let keyID else { return }
            var attributes = itemQuery
            attributes[kSecValueData as String] = Data(keyID.utf8)
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            _ = SecItemAdd(attributes as CFDictionary, nil)
        }

        /// What names the item. The data protection keychain on macOS too, where the
        /// accessibility above is honoured only there.
        private var itemQuery: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }
    }
#endif
