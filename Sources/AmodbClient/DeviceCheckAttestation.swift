#if canImport(DeviceCheck)
    import DeviceCheck
    public import Foundation

    /// The ``AppAttestationProvider`` of Apple devices: `DCAppAttestService.shared`.
    ///
    /// App Attest needs a device with a Secure Enclave (``isSupported`` is `false` in the
    /// simulator and on some Macs) and the App Attest capability, whose entitlement
    /// (`com.apple.developer.devicecheck.appattest-environment`) says which environment the
    /// keys belong to: `development` for builds run from Xcode, `production` for TestFlight
    /// and the App Store. The proxy accepts development keys only when told to.
    public struct DeviceCheckAttestation: AppAttestationProvider {
        /// The provider; it holds nothing, each call goes to `DCAppAttestService.shared`.
        public init() {}

        /// Whether this device can make and attest keys.
        public var isSupported: Bool { DCAppAttestService.shared.isSupported }

        /// `DCAppAttestService.generateKey()`, after checking ``isSupported``.
        public func generateKey() async throws -> String {
            guard isSupported else { throw AppAttestationUnsupportedError() }
            do {
                return try await DCAppAttestService.shared.generateKey()
            } catch {
                throw Self.translated(error)
            }
        }

        /// `DCAppAttestService.attestKey(_:clientDataHash:)`.
        public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
            do {
                return try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash)
            } catch {
                throw Self.translated(error)
            }
        }

        /// `DCAppAttestService.generateAssertion(_:clientDataHash:)`.
        public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
            do {
                return try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
            } catch {
                throw Self.translated(error)
            }
        }

        /// The two `DCError`s ``AppAttestSession`` acts on, as the errors it knows: a key the
        /// device no longer has is replaced, and an unsupported device is said to be one.
        /// Any other error is passed on as it is.
        private static func translated(_ error: any Error) -> any Error {
            guard let error = error as? DCError else { return error }
            switch error.code {
            case .invalidKey: return AppAttestationInvalidKeyError()
            case .featureUnsupported: return AppAttestationUnsupportedError()
            default: return error
            }
        }
    }
#endif
