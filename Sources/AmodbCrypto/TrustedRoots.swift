/// The root certificates a chain must end at, and the one check of a chain against them,
/// made by libcrypto's `X509_verify_cert` at a time the caller gives: the time is an
/// input, so a recorded chain can be checked as of when it was made.
///
/// Each check builds its own `X509_STORE` and frees it before returning: nothing libcrypto
/// holds is shared between threads or between checks.
public struct TrustedRoots: Sendable {
    /// The roots, in the order given.
    public let certificates: [X509Certificate]

    /// Trusts exactly `certificates`.
    public init(_ certificates: [X509Certificate]) {
        self.certificates = certificates
    }

    /// What a check of a chain found.
    public enum Verdict: Sendable, Equatable {
        /// The chain leads from the leaf to one of the roots, and every certificate in it
        /// was valid at the time given.
        case trusted
        /// The certificate at `depth` (0 for the leaf) had expired by then.
        case expired(depth: Int)
        /// The certificate at `depth` (0 for the leaf) was not yet valid then.
        case notYetValid(depth: Int)
        /// No chain to a root: libcrypto's reason (`unable to get local issuer certificate`,
        /// `certificate signature failure`); it names no key and no certificate's content.
        case untrusted(String)
    }

    /// `X509_V_ERR_CERT_NOT_YET_VALID`
    private static let certificateNotYetValid: Int32 = 9
    /// `X509_V_ERR_CERT_HAS_EXPIRED`
    private static let certificateHasExpired: Int32 = 10

    /// Whether `leaf` chains through some of `intermediates` (untrusted: they only help build
    /// the path) to one of the roots at `secondsSince1970`, with no more intermediate
    /// certificates in the path than `intermediates` holds.
    public func verify(_ leaf: X509Certificate, intermediates: [X509Certificate], at secondsSince1970: Int) -> Verdict {
        guard let store = libcrypto.X509_STORE_new() else { return .untrusted("libcrypto could not make a store") }
        defer { libcrypto.X509_STORE_free(store) }
        for root in certificates {
            // The store takes its own reference to each root.
            guard libcrypto.X509_STORE_add_cert(store, root.box.certificate) == 1 else {
                libcrypto.ERR_clear_error()
                return .untrusted("libcrypto could not add a root")
            }
        }
        guard let untrusted = libcrypto.OPENSSL_sk_new_null() else {
            return .untrusted("libcrypto could not make a stack")
        }
        // The stack borrows the certificates; `intermediates` keeps them alive until it is freed.
        defer { libcrypto.OPENSSL_sk_free(untrusted) }
        for intermediate in intermediates {
            guard libcrypto.OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate.box.certificate)) > 0 else {
                return .untrusted("libcrypto could not grow a stack")
            }
        }
        guard let context = libcrypto.X509_STORE_CTX_new() else {
            return .untrusted("libcrypto could not make a verification context")
        }
        defer { libcrypto.X509_STORE_CTX_free(context) }
        guard libcrypto.X509_STORE_CTX_init(context, store, leaf.box.certificate, untrusted) == 1,
            let parameters = libcrypto.X509_STORE_CTX_get0_param(context)
        else {
            libcrypto.ERR_clear_error()
            return .untrusted("libcrypto could not start a verification")
        }
        libcrypto.X509_VERIFY_PARAM_set_time(parameters, secondsSince1970)
        libcrypto.X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: intermediates.count))
        // withExtendedLifetime: the stack and the context borrow these certificates' X509s.
        let verified = withExtendedLifetime((leaf, intermediates)) { libcrypto.X509_verify_cert(context) }
        guard verified != 1 else { return .trusted }
        let error = libcrypto.X509_STORE_CTX_get_error(context)
        let depth = Int(libcrypto.X509_STORE_CTX_get_error_depth(context))
        libcrypto.ERR_clear_error()
        switch error {
        case Self.certificateHasExpired: return .expired(depth: depth)
        case Self.certificateNotYetValid: return .notYetValid(depth: depth)
        default:
            let reason = libcrypto.X509_verify_cert_error_string(Int(error)).map { String(cString: $0) }
            return .untrusted(reason ?? "error \(error)")
        }
    }
}
