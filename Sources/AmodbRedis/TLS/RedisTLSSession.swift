import AmodbSockets

/// One connection's TLS session (`SSL`) over its non-blocking socket: the handshake, reads
/// and writes, each returning what to wait for rather than blocking. OpenSSL's
/// `SSL_ERROR_WANT_READ`/`WANT_WRITE` become `.wantRead`/`.wantWrite`, which the
/// connection maps to its read and write sources; its timeouts bound every wait, so a
/// stalled handshake is a connect timeout like a stalled TCP connect.
///
/// The session never closes the fd (`SSL_set_fd` makes a socket BIO that leaves it open):
/// the connection's `RedisSocket` stays the one place it is closed.
///
/// `@unchecked Sendable`: used only on its connection's queue.
final class RedisTLSSession: @unchecked Sendable {
    /// What a TLS call did.
    enum Outcome {
        /// Progress: bytes read or written (0 from a read: the peer closed the session).
        case done(Int)
        /// Call again once the socket is readable.
        case wantRead
        /// Call again once the socket is writable.
        case wantWrite
        /// The session is unusable; the error says why.
        case failed(RedisError)
    }

    private let context: RedisTLSContext
    private let ssl: OpaquePointer
    private var library: LibSSL { context.library }

    /// A session on `fd` for `host`: SNI carries the name (not an IP literal, RFC 6066
    /// §3), and the certificate must name it (a DNS name) or list it (an IP address).
    init(context: RedisTLSContext, fd: Int32, host: String) throws(RedisError) {
        self.context = context
        let library = context.library
        library.ERR_clear_error()
        guard let ssl = library.SSL_new(context.context) else {
            throw .unavailable("TLS: SSL_new failed: \(library.takeErrorText(or: "no reason given"))")
        }
        self.ssl = ssl
        guard library.SSL_set_fd(ssl, fd) == 1 else {
            throw .unavailable("TLS: SSL_set_fd failed: \(library.takeErrorText(or: "no reason given"))")
        }
        if SocketAddress(host: host, port: 0) != nil {
            guard library.X509_VERIFY_PARAM_set1_ip_asc(library.SSL_get0_param(ssl), host) == 1 else {
                throw .unavailable("TLS: cannot check the certificate against the address \(host)")
            }
        } else {
            guard library.SSL_set1_host(ssl, host) == 1,
                host.withCString({
                    library.SSL_ctrl(ssl, LibSSL.controlHostName, 0, UnsafeMutableRawPointer(mutating: $0))
                }) == 1
            else {
                throw .unavailable("TLS: cannot check the certificate against the name \(host)")
            }
        }
    }

    deinit {
        library.SSL_free(ssl)
    }

    /// One step of the handshake (`SSL_connect`); `.done` once it is complete and the
    /// server's certificate verified.
    func handshake() -> Outcome {
        library.ERR_clear_error()
        let result = library.SSL_connect(ssl)
        return result == 1 ? .done(0) : outcome(of: result)
    }

    /// Reads into `buffer` (`SSL_read`).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        library.ERR_clear_error()
        let result = library.SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        return result > 0 ? .done(Int(result)) : outcome(of: result)
    }

    /// Writes from `bytes` (`SSL_write`, partial writes allowed).
    func write(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        library.ERR_clear_error()
        let result = library.SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        return result > 0 ? .done(Int(result)) : outcome(of: result)
    }

    /// What a call that returned `result` (not a success) means; reads the error queue at
    /// once, on the thread that made the call.
    private func outcome(of result: Int32) -> Outcome {
        switch library.SSL_get_error(ssl, result) {
        case LibSSL.errorWantRead:
            return .wantRead
        case LibSSL.errorWantWrite:
            return .wantWrite
        case LibSSL.errorZeroReturn:
            return .done(0)
        case LibSSL.errorSyscall:
            let text = library.takeErrorText(or: "")
            return .failed(text.isEmpty ? .connectionClosed : .unavailable("TLS: \(text)"))
        default:
            // A handshake that failed on the certificate says why in the verify result
            // (expired, wrong name, unknown CA); the error queue only says "verify failed".
            let verify = library.SSL_get_verify_result(ssl)
            if verify != 0 {
                library.ERR_clear_error()
                let reason =
                    library.X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "code \(verify)"
                return .failed(.certificateRejected(reason))
            }
            return .failed(.unavailable("TLS: \(library.takeErrorText(or: "the TLS session failed"))"))
        }
    }
}
