import AmodbDynamicLibrary

/// The functions of OpenSSL 3's libssl (and the few of libcrypto it needs) that Redis over
/// TLS calls, taken from the system's `libssl.so.3` (Debian libssl3) the first time a
/// `rediss://` connection is configured: no OpenSSL header or `-dev` package is needed to
/// build, and a machine without the library is told which package to install. Each is
/// written with its C declaration (OpenSSL 3.0), which its Swift type must match, since
/// nothing checks it. Macros such as `SSL_CTX_set_min_proto_version` are the `*_ctrl`
/// calls they expand to, with the constants from OpenSSL's headers.
///
/// libcrypto's functions are looked up through libssl's handle: dlsym(3) on a handle also
/// searches the libraries it depends on, and libssl depends on libcrypto.
final class LibSSL: Sendable {
    /// The file names tried, in order: OpenSSL 3's soname.
    static let fileNames = ["libssl.so.3"]
    /// The Debian package that installs it.
    static let package = "libssl3"

    /// The process's libssl, loaded once, or why it could not be.
    static let system = Result { () throws(DynamicLibraryError) in try LibSSL(fileNames: fileNames) }

    /// `SSL_CTRL_MODE`, for `SSL_CTX_set_mode`.
    static let controlMode: Int32 = 33
    /// `SSL_CTRL_SET_MIN_PROTO_VERSION`, for `SSL_CTX_set_min_proto_version`.
    static let controlMinimumProtocol: Int32 = 123
    /// `SSL_CTRL_SET_TLSEXT_HOSTNAME`, for `SSL_set_tlsext_host_name` (SNI).
    static let controlHostName: Int32 = 55
    /// `TLS1_2_VERSION`.
    static let tls12: Int = 0x0303
    /// `SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER`: a write may
    /// take part of the buffer, and a write retried after `WANT_WRITE` may pass the same
    /// bytes from a buffer that has since grown (and moved).
    static let writeModes: Int = 0x1 | 0x2
    /// `SSL_VERIFY_PEER`.
    static let verifyPeer: Int32 = 0x01
    /// `SSL_FILETYPE_PEM`.
    static let fileTypePEM: Int32 = 1
    /// `SSL_ERROR_SSL`, `SSL_ERROR_WANT_READ`, `SSL_ERROR_WANT_WRITE`, `SSL_ERROR_SYSCALL`,
    /// `SSL_ERROR_ZERO_RETURN`.
    static let errorSSL: Int32 = 1
    static let errorWantRead: Int32 = 2
    static let errorWantWrite: Int32 = 3
    static let errorSyscall: Int32 = 5
    static let errorZeroReturn: Int32 = 6

    /// `const SSL_METHOD *TLS_client_method(void)`
    let TLS_client_method: @convention(c) () -> OpaquePointer?
    /// `SSL_CTX *SSL_CTX_new(const SSL_METHOD *method)`
    let SSL_CTX_new: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `void SSL_CTX_free(SSL_CTX *ctx)`
    let SSL_CTX_free: @convention(c) (OpaquePointer?) -> Void
    /// `long SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg)`
    let SSL_CTX_ctrl: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    /// `void SSL_CTX_set_verify(SSL_CTX *ctx, int mode, SSL_verify_cb verify_callback)`
    let SSL_CTX_set_verify: @convention(c) (OpaquePointer?, Int32, OpaquePointer?) -> Void
    /// `int SSL_CTX_set_default_verify_paths(SSL_CTX *ctx)`
    let SSL_CTX_set_default_verify_paths: @convention(c) (OpaquePointer?) -> Int32
    /// `int SSL_CTX_load_verify_locations(SSL_CTX *ctx, const char *CAfile, const char *CApath)`
    let SSL_CTX_load_verify_locations:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    /// `int SSL_CTX_use_certificate_chain_file(SSL_CTX *ctx, const char *file)`
    let SSL_CTX_use_certificate_chain_file: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    /// `int SSL_CTX_use_PrivateKey_file(SSL_CTX *ctx, const char *file, int type)`
    let SSL_CTX_use_PrivateKey_file: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
    /// `int SSL_CTX_check_private_key(const SSL_CTX *ctx)`
    let SSL_CTX_check_private_key: @convention(c) (OpaquePointer?) -> Int32
    /// `SSL *SSL_new(SSL_CTX *ctx)`
    let SSL_new: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `void SSL_free(SSL *ssl)`
    let SSL_free: @convention(c) (OpaquePointer?) -> Void
    /// `int SSL_set_fd(SSL *ssl, int fd)`
    let SSL_set_fd: @convention(c) (OpaquePointer?, Int32) -> Int32
    /// `long SSL_ctrl(SSL *ssl, int cmd, long larg, void *parg)`
    let SSL_ctrl: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    /// `int SSL_set1_host(SSL *s, const char *hostname)`
    let SSL_set1_host: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    /// `X509_VERIFY_PARAM *SSL_get0_param(SSL *ssl)`
    let SSL_get0_param: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `int SSL_connect(SSL *ssl)`
    let SSL_connect: @convention(c) (OpaquePointer?) -> Int32
    /// `int SSL_read(SSL *ssl, void *buf, int num)`
    let SSL_read: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Int32
    /// `int SSL_write(SSL *ssl, const void *buf, int num)`
    let SSL_write: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32
    /// `int SSL_get_error(const SSL *ssl, int ret)`
    let SSL_get_error: @convention(c) (OpaquePointer?, Int32) -> Int32
    /// `long SSL_get_verify_result(const SSL *ssl)`
    let SSL_get_verify_result: @convention(c) (OpaquePointer?) -> Int

    /// `int X509_VERIFY_PARAM_set1_ip_asc(X509_VERIFY_PARAM *param, const char *ipasc)` (libcrypto)
    let X509_VERIFY_PARAM_set1_ip_asc: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    /// `const char *X509_verify_cert_error_string(long n)` (libcrypto)
    let X509_verify_cert_error_string: @convention(c) (Int) -> UnsafePointer<CChar>?
    /// `unsigned long ERR_get_error(void)` (libcrypto)
    let ERR_get_error: @convention(c) () -> UInt
    /// `void ERR_clear_error(void)` (libcrypto)
    let ERR_clear_error: @convention(c) () -> Void
    /// `void ERR_error_string_n(unsigned long e, char *buf, size_t len)` (libcrypto)
    let ERR_error_string_n: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void

    /// Opens the first of `fileNames` that loads and takes every function above from it;
    /// throws, naming the package to install, when the library or a function is missing.
    init(fileNames: [String]) throws(DynamicLibraryError) {
        let library = try DynamicLibrary(fileNames: fileNames, package: Self.package)
        TLS_client_method = try library.function("TLS_client_method")
        SSL_CTX_new = try library.function("SSL_CTX_new")
        SSL_CTX_free = try library.function("SSL_CTX_free")
        SSL_CTX_ctrl = try library.function("SSL_CTX_ctrl")
        SSL_CTX_set_verify = try library.function("SSL_CTX_set_verify")
        SSL_CTX_set_default_verify_paths = try library.function("SSL_CTX_set_default_verify_paths")
        SSL_CTX_load_verify_locations = try library.function("SSL_CTX_load_verify_locations")
        SSL_CTX_use_certificate_chain_file = try library.function("SSL_CTX_use_certificate_chain_file")
        SSL_CTX_use_PrivateKey_file = try library.function("SSL_CTX_use_PrivateKey_file")
        SSL_CTX_check_private_key = try library.function("SSL_CTX_check_private_key")
        SSL_new = try library.function("SSL_new")
        SSL_free = try library.function("SSL_free")
        SSL_set_fd = try library.function("SSL_set_fd")
        SSL_ctrl = try library.function("SSL_ctrl")
        SSL_set1_host = try library.function("SSL_set1_host")
        SSL_get0_param = try library.function("SSL_get0_param")
        SSL_connect = try library.function("SSL_connect")
        SSL_read = try library.function("SSL_read")
        SSL_write = try library.function("SSL_write")
        SSL_get_error = try library.function("SSL_get_error")
        SSL_get_verify_result = try library.function("SSL_get_verify_result")
        X509_VERIFY_PARAM_set1_ip_asc = try library.function("X509_VERIFY_PARAM_set1_ip_asc")
        X509_verify_cert_error_string = try library.function("X509_verify_cert_error_string")
        ERR_get_error = try library.function("ERR_get_error")
        ERR_clear_error = try library.function("ERR_clear_error")
        ERR_error_string_n = try library.function("ERR_error_string_n")
    }

    /// The oldest error on this thread's OpenSSL error queue as text (then the queue
    /// cleared), or `fallback` when it is empty.
    func takeErrorText(or fallback: String) -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return fallback }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
