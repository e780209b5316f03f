/// One OpenSSL client context (`SSL_CTX`) for a configuration's `rediss://` connections:
/// TLS 1.2 or later, the peer verified (`SSL_VERIFY_PEER`) against the system's trust
/// store or the CA file, and the client certificate when one is given. Made once per
/// client; its connections each make a `RedisTLSSession` from it.
///
/// `@unchecked Sendable`: the context is configured in `init` and only read afterwards
/// (`SSL_new`), which OpenSSL allows from any thread.
final class RedisTLSContext: @unchecked Sendable {
    let library: LibSSL
    let context: OpaquePointer

    /// A context for `files`; throws the reason (a file that does not load, a key that does
    /// not match its certificate, libssl missing), worded for the operator.
    init(files: RedisTLSFiles) throws(RedisTLSError) {
        let library: LibSSL
        switch LibSSL.system {
        case .success(let loaded): library = loaded
        case .failure(let error): throw RedisTLSError("rediss:// \(error.description)")
        }
        library.ERR_clear_error()
        guard let context = library.SSL_CTX_new(library.TLS_client_method()) else {
            throw RedisTLSError("SSL_CTX_new failed: \(library.takeErrorText(or: "no reason given"))")
        }
        self.library = library
        self.context = context
        _ = library.SSL_CTX_ctrl(context, LibSSL.controlMode, LibSSL.writeModes, nil)
        guard library.SSL_CTX_ctrl(context, LibSSL.controlMinimumProtocol, LibSSL.tls12, nil) == 1 else {
            throw RedisTLSError("could not require TLS 1.2: \(library.takeErrorText(or: "no reason given"))")
        }
        library.SSL_CTX_set_verify(context, LibSSL.verifyPeer, nil)
        if let caFile = files.caFile {
            guard library.SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw RedisTLSError(
                    "CA file \(caFile) does not load: \(library.takeErrorText(or: "no certificate in it"))",
                    file: .authority)
            }
        } else {
            guard library.SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw RedisTLSError(
                    "the system's trust store does not load: \(library.takeErrorText(or: "no reason given"))")
            }
        }
        switch (files.certificateFile, files.keyFile) {
        case (nil, nil):
            break
        case (let certificateFile?, let keyFile?):
            guard library.SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
                throw RedisTLSError(
                    "client certificate \(certificateFile) does not load: \(library.takeErrorText(or: "no certificate in it"))",
                    file: .certificate)
            }
            guard library.SSL_CTX_use_PrivateKey_file(context, keyFile, LibSSL.fileTypePEM) == 1 else {
                throw RedisTLSError(
                    "client key \(keyFile) does not load: \(library.takeErrorText(or: "no key in it"))", file: .key)
            }
            guard library.SSL_CTX_check_private_key(context) == 1 else {
                throw RedisTLSError("client key \(keyFile) does not match certificate \(certificateFile)", file: .key)
            }
        case (_?, nil):
            throw RedisTLSError("a client certificate needs both its certificate file and its key file", file: .key)
        case (nil, _?):
            throw RedisTLSError(
                "a client certificate needs both its certificate file and its key file", file: .certificate)
        }
    }

    /// The context `configuration`'s connections use: `nil` for `redis://`; for `rediss://`
    /// the context, or why it could not be made (each connection attempt then fails with it).
    static func make(for configuration: RedisConfiguration) -> Result<RedisTLSContext, RedisTLSError>? {
        guard configuration.endpoint.usesTLS else { return nil }
        return Result { () throws(RedisTLSError) in try RedisTLSContext(files: configuration.tls) }
    }

    deinit {
        library.SSL_CTX_free(context)
    }
}

/// Why TLS for Redis could not be set up: a file that does not load, libssl missing. Its
/// description is the reason alone, for the caller to word with the setting it came from.
public struct RedisTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which of the TLS files is at fault, for a message that names its setting.
    public enum File: Sendable, Equatable {
        /// The CA file the server's certificate is verified with.
        case authority
        /// The client certificate (chain).
        case certificate
        /// The client's private key.
        case key
    }

    /// What is wrong.
    public let reason: String
    /// The file at fault, when one is (`nil`: the TLS library itself, the system's trust store).
    public let file: File?

    init(_ reason: String, file: File? = nil) {
        self.reason = reason
        self.file = file
    }

    public var description: String { reason }
}
