import AmodbDynamicLibrary

/// The process's libcrypto (`LibCrypto.loaded`), under the name the calls here give it:
/// `libcrypto.HMAC(…)`.
var libcrypto: LibCrypto { LibCrypto.loaded }

/// The functions of OpenSSL 3's libcrypto that AmodbCrypto calls, taken from the system's
/// `libcrypto.so.3` (Debian libssl3) when the process first needs one: no OpenSSL header
/// or `-dev` package is needed to build, and a machine without the library is told which
/// package to install. The one place that declares them; each is written with its C
/// declaration (OpenSSL 3.0), which its Swift type must match, since nothing checks it.
///
/// libcrypto's structures stay opaque here (`OpaquePointer`): they are only created,
/// passed back and freed by libcrypto's own functions. OpenSSL 3.0's deprecated calls are
/// not used, so that no code comes to depend on an API due for removal.
final class LibCrypto: Sendable {
    /// The file names tried, in order: OpenSSL 3's soname.
    static let fileNames = ["libcrypto.so.3"]
    /// The Debian package that installs them.
    static let package = "libssl3"

    /// The process's libcrypto, loaded once, or why it could not be.
    static let system = Result { () throws(CryptoError) in try LibCrypto(fileNames: fileNames) }

    /// The process's libcrypto. Where it is missing this stops the process, naming the
    /// package: no answer can be computed without it. Programs call
    /// `CryptoLibrary.load()` when they start, so that this is never where they learn it.
    static var loaded: LibCrypto {
        switch system {
        case .success(let library): library
        case .failure(let error): fatalError("AmodbCrypto \(error.description)")
        }
    }

    /// `EVP_PKEY_PUBLIC_KEY`, the selection `EVP_PKEY_fromdata` builds a public key with:
    /// `OSSL_KEYMGMT_SELECT_ALL_PARAMETERS | OSSL_KEYMGMT_SELECT_PUBLIC_KEY`, 0x84 | 0x02.
    static let publicKeySelection: Int32 = 0x86

    /// `int CRYPTO_memcmp(const void *in_a, const void *in_b, size_t len)`
    let CRYPTO_memcmp: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int) -> Int32
    /// `const EVP_MD *EVP_sha256(void)`
    let EVP_sha256: @convention(c) () -> OpaquePointer?
    /// `unsigned char *HMAC(const EVP_MD *evp_md, const void *key, int key_len,
    /// const unsigned char *data, size_t data_len, unsigned char *md, unsigned int *md_len)`
    let HMAC:
        @convention(c) (
            OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?,
            UnsafeMutablePointer<UInt32>?
        ) -> UnsafeMutablePointer<UInt8>?

    /// `BIGNUM *BN_bin2bn(const unsigned char *s, int len, BIGNUM *ret)`
    let BN_bin2bn: @convention(c) (UnsafePointer<UInt8>?, Int32, OpaquePointer?) -> OpaquePointer?
    /// `int BN_bn2binpad(const BIGNUM *a, unsigned char *to, int tolen)`
    let BN_bn2binpad: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32
    /// `int BN_num_bits(const BIGNUM *a)`
    let BN_num_bits: @convention(c) (OpaquePointer?) -> Int32
    /// `void BN_free(BIGNUM *a)`
    let BN_free: @convention(c) (OpaquePointer?) -> Void

    /// `ECDSA_SIG *ECDSA_SIG_new(void)`
    let ECDSA_SIG_new: @convention(c) () -> OpaquePointer?
    /// `void ECDSA_SIG_free(ECDSA_SIG *sig)`
    let ECDSA_SIG_free: @convention(c) (OpaquePointer?) -> Void
    /// `int ECDSA_SIG_set0(ECDSA_SIG *sig, BIGNUM *r, BIGNUM *s)`
    let ECDSA_SIG_set0: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    /// `const BIGNUM *ECDSA_SIG_get0_r(const ECDSA_SIG *sig)`
    let ECDSA_SIG_get0_r: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `const BIGNUM *ECDSA_SIG_get0_s(const ECDSA_SIG *sig)`
    let ECDSA_SIG_get0_s: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `int i2d_ECDSA_SIG(const ECDSA_SIG *a, unsigned char **out)`
    let i2d_ECDSA_SIG: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
    /// `ECDSA_SIG *d2i_ECDSA_SIG(ECDSA_SIG **a, const unsigned char **in, long len)`
    let d2i_ECDSA_SIG:
        @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, Int) ->
            OpaquePointer?

    /// `EVP_MD_CTX *EVP_MD_CTX_new(void)`
    let EVP_MD_CTX_new: @convention(c) () -> OpaquePointer?
    /// `void EVP_MD_CTX_free(EVP_MD_CTX *ctx)`
    let EVP_MD_CTX_free: @convention(c) (OpaquePointer?) -> Void
    /// `int EVP_DigestVerifyInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type,
    /// ENGINE *e, EVP_PKEY *pkey)`
    let EVP_DigestVerifyInit:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, OpaquePointer?, OpaquePointer?
        ) -> Int32
    /// `int EVP_DigestVerify(EVP_MD_CTX *ctx, const unsigned char *sigret, size_t siglen,
    /// const unsigned char *tbs, size_t tbslen)`
    let EVP_DigestVerify:
        @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int) -> Int32
    /// `int EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type,
    /// ENGINE *e, EVP_PKEY *pkey)`
    let EVP_DigestSignInit:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, OpaquePointer?, OpaquePointer?
        ) -> Int32
    /// `int EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sigret, size_t *siglen,
    /// const unsigned char *tbs, size_t tbslen)`
    let EVP_DigestSign:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, Int
        ) -> Int32

    /// `EVP_PKEY_CTX *EVP_PKEY_CTX_new_from_name(OSSL_LIB_CTX *libctx, const char *name,
    /// const char *propquery)`
    let EVP_PKEY_CTX_new_from_name:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> OpaquePointer?
    /// `EVP_PKEY_CTX *EVP_PKEY_CTX_new_from_pkey(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey,
    /// const char *propquery)`
    let EVP_PKEY_CTX_new_from_pkey:
        @convention(c) (OpaquePointer?, OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    /// `void EVP_PKEY_CTX_free(EVP_PKEY_CTX *ctx)`
    let EVP_PKEY_CTX_free: @convention(c) (OpaquePointer?) -> Void
    /// `int EVP_PKEY_fromdata_init(EVP_PKEY_CTX *ctx)`
    let EVP_PKEY_fromdata_init: @convention(c) (OpaquePointer?) -> Int32
    /// `int EVP_PKEY_fromdata(EVP_PKEY_CTX *ctx, EVP_PKEY **ppkey, int selection, OSSL_PARAM param[])`
    let EVP_PKEY_fromdata:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, Int32, OpaquePointer?) -> Int32
    /// `int EVP_PKEY_public_check(EVP_PKEY_CTX *ctx)`
    let EVP_PKEY_public_check: @convention(c) (OpaquePointer?) -> Int32
    /// `int EVP_PKEY_keygen_init(EVP_PKEY_CTX *ctx)`
    let EVP_PKEY_keygen_init: @convention(c) (OpaquePointer?) -> Int32
    /// `int EVP_PKEY_generate(EVP_PKEY_CTX *ctx, EVP_PKEY **ppkey)`
    let EVP_PKEY_generate: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    /// `int EVP_PKEY_CTX_set_rsa_keygen_bits(EVP_PKEY_CTX *ctx, int bits)`
    let EVP_PKEY_CTX_set_rsa_keygen_bits: @convention(c) (OpaquePointer?, Int32) -> Int32
    /// `int EVP_PKEY_CTX_set_group_name(EVP_PKEY_CTX *ctx, const char *name)`
    let EVP_PKEY_CTX_set_group_name: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    /// `int EVP_PKEY_get_bn_param(const EVP_PKEY *pkey, const char *key_name, BIGNUM **bn)`
    let EVP_PKEY_get_bn_param:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    /// `void EVP_PKEY_free(EVP_PKEY *pkey)`
    let EVP_PKEY_free: @convention(c) (OpaquePointer?) -> Void

    /// `OSSL_PARAM_BLD *OSSL_PARAM_BLD_new(void)`
    let OSSL_PARAM_BLD_new: @convention(c) () -> OpaquePointer?
    /// `void OSSL_PARAM_BLD_free(OSSL_PARAM_BLD *bld)`
    let OSSL_PARAM_BLD_free: @convention(c) (OpaquePointer?) -> Void
    /// `OSSL_PARAM *OSSL_PARAM_BLD_to_param(OSSL_PARAM_BLD *bld)`
    let OSSL_PARAM_BLD_to_param: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `int OSSL_PARAM_BLD_push_BN(OSSL_PARAM_BLD *bld, const char *key, const BIGNUM *bn)`
    let OSSL_PARAM_BLD_push_BN: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?) -> Int32
    /// `int OSSL_PARAM_BLD_push_utf8_string(OSSL_PARAM_BLD *bld, const char *key,
    /// const char *buf, size_t bsize)`
    let OSSL_PARAM_BLD_push_utf8_string:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int) -> Int32
    /// `int OSSL_PARAM_BLD_push_octet_string(OSSL_PARAM_BLD *bld, const char *key,
    /// const void *buf, size_t bsize)`
    let OSSL_PARAM_BLD_push_octet_string:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeRawPointer?, Int) -> Int32
    /// `void OSSL_PARAM_free(OSSL_PARAM *p)`
    let OSSL_PARAM_free: @convention(c) (OpaquePointer?) -> Void

    /// `int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size,
    /// const EVP_MD *type, ENGINE *impl)`
    let EVP_Digest:
        @convention(c) (
            UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?, OpaquePointer?,
            OpaquePointer?
        ) -> Int32
    /// `void ERR_clear_error(void)`
    let ERR_clear_error: @convention(c) () -> Void

    /// `int EVP_PKEY_get_group_name(const EVP_PKEY *pkey, char *name, size_t name_sz, size_t *gname_len)`
    let EVP_PKEY_get_group_name:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int, UnsafeMutablePointer<Int>?) -> Int32
    /// `int EVP_PKEY_is_a(const EVP_PKEY *pkey, const char *name)`
    let EVP_PKEY_is_a: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32

    /// `X509 *X509_new(void)`
    let X509_new: @convention(c) () -> OpaquePointer?
    /// `void X509_free(X509 *a)`
    let X509_free: @convention(c) (OpaquePointer?) -> Void
    /// `X509 *d2i_X509(X509 **a, const unsigned char **in, long len)`
    let d2i_X509:
        @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, Int) ->
            OpaquePointer?
    /// `int i2d_X509(const X509 *a, unsigned char **out)`
    let i2d_X509: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
    /// `EVP_PKEY *X509_get0_pubkey(const X509 *x)`
    let X509_get0_pubkey: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `int X509_get_ext_by_OBJ(const X509 *x, const ASN1_OBJECT *obj, int lastpos)`
    let X509_get_ext_by_OBJ: @convention(c) (OpaquePointer?, OpaquePointer?, Int32) -> Int32
    /// `X509_EXTENSION *X509_get_ext(const X509 *x, int loc)`
    let X509_get_ext: @convention(c) (OpaquePointer?, Int32) -> OpaquePointer?
    /// `ASN1_OCTET_STRING *X509_EXTENSION_get_data(X509_EXTENSION *ne)`
    let X509_EXTENSION_get_data: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `const unsigned char *ASN1_STRING_get0_data(const ASN1_STRING *x)`
    let ASN1_STRING_get0_data: @convention(c) (OpaquePointer?) -> UnsafePointer<UInt8>?
    /// `int ASN1_STRING_length(const ASN1_STRING *x)`
    let ASN1_STRING_length: @convention(c) (OpaquePointer?) -> Int32
    /// `ASN1_OBJECT *OBJ_txt2obj(const char *s, int no_name)`
    let OBJ_txt2obj: @convention(c) (UnsafePointer<CChar>?, Int32) -> OpaquePointer?
    /// `void ASN1_OBJECT_free(ASN1_OBJECT *a)`
    let ASN1_OBJECT_free: @convention(c) (OpaquePointer?) -> Void

    /// `X509_STORE *X509_STORE_new(void)`
    let X509_STORE_new: @convention(c) () -> OpaquePointer?
    /// `void X509_STORE_free(X509_STORE *v)`
    let X509_STORE_free: @convention(c) (OpaquePointer?) -> Void
    /// `int X509_STORE_add_cert(X509_STORE *xs, X509 *x)`
    let X509_STORE_add_cert: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    /// `X509_STORE_CTX *X509_STORE_CTX_new(void)`
    let X509_STORE_CTX_new: @convention(c) () -> OpaquePointer?
    /// `void X509_STORE_CTX_free(X509_STORE_CTX *ctx)`
    let X509_STORE_CTX_free: @convention(c) (OpaquePointer?) -> Void
    /// `int X509_STORE_CTX_init(X509_STORE_CTX *ctx, X509_STORE *trust_store, X509 *target,
    /// STACK_OF(X509) *untrusted)`
    let X509_STORE_CTX_init: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    /// `X509_VERIFY_PARAM *X509_STORE_CTX_get0_param(const X509_STORE_CTX *ctx)`
    let X509_STORE_CTX_get0_param: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `void X509_VERIFY_PARAM_set_time(X509_VERIFY_PARAM *param, time_t t)`
    let X509_VERIFY_PARAM_set_time: @convention(c) (OpaquePointer?, Int) -> Void
    /// `void X509_VERIFY_PARAM_set_depth(X509_VERIFY_PARAM *param, int depth)`
    let X509_VERIFY_PARAM_set_depth: @convention(c) (OpaquePointer?, Int32) -> Void
    /// `int X509_verify_cert(X509_STORE_CTX *ctx)`
    let X509_verify_cert: @convention(c) (OpaquePointer?) -> Int32
    /// `int X509_STORE_CTX_get_error(const X509_STORE_CTX *ctx)`
    let X509_STORE_CTX_get_error: @convention(c) (OpaquePointer?) -> Int32
    /// `int X509_STORE_CTX_get_error_depth(const X509_STORE_CTX *ctx)`
    let X509_STORE_CTX_get_error_depth: @convention(c) (OpaquePointer?) -> Int32
    /// `const char *X509_verify_cert_error_string(long n)`
    let X509_verify_cert_error_string: @convention(c) (Int) -> UnsafePointer<CChar>?
    /// `OPENSSL_STACK *OPENSSL_sk_new_null(void)`, which `sk_X509_new_null` is a macro for.
    let OPENSSL_sk_new_null: @convention(c) () -> OpaquePointer?
    /// `int OPENSSL_sk_push(OPENSSL_STACK *st, const void *data)`
    let OPENSSL_sk_push: @convention(c) (OpaquePointer?, UnsafeRawPointer?) -> Int32
    /// `void OPENSSL_sk_free(OPENSSL_STACK *st)`: frees the stack, not what it holds.
    let OPENSSL_sk_free: @convention(c) (OpaquePointer?) -> Void

    /// `int X509_set_version(X509 *x, long version)`
    let X509_set_version: @convention(c) (OpaquePointer?, Int) -> Int32
    /// `ASN1_INTEGER *X509_get_serialNumber(X509 *x)`
    let X509_get_serialNumber: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `int ASN1_INTEGER_set(ASN1_INTEGER *a, long v)`
    let ASN1_INTEGER_set: @convention(c) (OpaquePointer?, Int) -> Int32
    /// `ASN1_TIME *X509_getm_notBefore(const X509 *x)`
    let X509_getm_notBefore: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `ASN1_TIME *X509_getm_notAfter(const X509 *x)`
    let X509_getm_notAfter: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `ASN1_TIME *ASN1_TIME_set(ASN1_TIME *s, time_t t)`
    let ASN1_TIME_set: @convention(c) (OpaquePointer?, Int) -> OpaquePointer?
    /// `X509_NAME *X509_get_subject_name(const X509 *a)`
    let X509_get_subject_name: @convention(c) (OpaquePointer?) -> OpaquePointer?
    /// `int X509_NAME_add_entry_by_txt(X509_NAME *name, const char *field, int type,
    /// const unsigned char *bytes, int len, int loc, int set)`
    let X509_NAME_add_entry_by_txt:
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt8>?, Int32, Int32, Int32) ->
            Int32
    /// `int X509_set_issuer_name(X509 *x, const X509_NAME *name)`
    let X509_set_issuer_name: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    /// `int X509_set_pubkey(X509 *x, EVP_PKEY *pkey)`
    let X509_set_pubkey: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    /// `ASN1_OCTET_STRING *ASN1_OCTET_STRING_new(void)`
    let ASN1_OCTET_STRING_new: @convention(c) () -> OpaquePointer?
    /// `void ASN1_OCTET_STRING_free(ASN1_OCTET_STRING *a)`
    let ASN1_OCTET_STRING_free: @convention(c) (OpaquePointer?) -> Void
    /// `int ASN1_OCTET_STRING_set(ASN1_OCTET_STRING *str, const unsigned char *data, int len)`
    let ASN1_OCTET_STRING_set: @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int32) -> Int32
    /// `X509_EXTENSION *X509_EXTENSION_create_by_OBJ(X509_EXTENSION **ex, const ASN1_OBJECT *obj,
    /// int crit, ASN1_OCTET_STRING *data)`
    let X509_EXTENSION_create_by_OBJ:
        @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, Int32, OpaquePointer?) -> OpaquePointer?
    /// `void X509_EXTENSION_free(X509_EXTENSION *a)`
    let X509_EXTENSION_free: @convention(c) (OpaquePointer?) -> Void
    /// `int X509_add_ext(X509 *x, X509_EXTENSION *ex, int loc)`: adds a copy.
    let X509_add_ext: @convention(c) (OpaquePointer?, OpaquePointer?, Int32) -> Int32
    /// `int X509_sign(X509 *x, EVP_PKEY *pkey, const EVP_MD *md)`
    let X509_sign: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32

    /// Opens the first of `fileNames` that loads and takes every function above from it;
    /// throws, naming the package to install, when the library or a function is missing.
    init(fileNames: [String]) throws(CryptoError) {
        do throws(DynamicLibraryError) {
            let library = try DynamicLibrary(fileNames: fileNames, package: Self.package)
            CRYPTO_memcmp = try library.function("CRYPTO_memcmp")
            EVP_sha256 = try library.function("EVP_sha256")
            HMAC = try library.function("HMAC")
            BN_bin2bn = try library.function("BN_bin2bn")
            BN_bn2binpad = try library.function("BN_bn2binpad")
            BN_num_bits = try library.function("BN_num_bits")
            BN_free = try library.function("BN_free")
            ECDSA_SIG_new = try library.function("ECDSA_SIG_new")
            ECDSA_SIG_free = try library.function("ECDSA_SIG_free")
            ECDSA_SIG_set0 = try library.function("ECDSA_SIG_set0")
            ECDSA_SIG_get0_r = try library.function("ECDSA_SIG_get0_r")
            ECDSA_SIG_get0_s = try library.function("ECDSA_SIG_get0_s")
            i2d_ECDSA_SIG = try library.function("i2d_ECDSA_SIG")
            d2i_ECDSA_SIG = try library.function("d2i_ECDSA_SIG")
            EVP_MD_CTX_new = try library.function("EVP_MD_CTX_new")
            EVP_MD_CTX_free = try library.function("EVP_MD_CTX_free")
            EVP_DigestVerifyInit = try library.function("EVP_DigestVerifyInit")
            EVP_DigestVerify = try library.function("EVP_DigestVerify")
            EVP_DigestSignInit = try library.function("EVP_DigestSignInit")
            EVP_DigestSign = try library.function("EVP_DigestSign")
            EVP_PKEY_CTX_new_from_name = try library.function("EVP_PKEY_CTX_new_from_name")
            EVP_PKEY_CTX_new_from_pkey = try library.function("EVP_PKEY_CTX_new_from_pkey")
            EVP_PKEY_CTX_free = try library.function("EVP_PKEY_CTX_free")
            EVP_PKEY_fromdata_init = try library.function("EVP_PKEY_fromdata_init")
            EVP_PKEY_fromdata = try library.function("EVP_PKEY_fromdata")
            EVP_PKEY_public_check = try library.function("EVP_PKEY_public_check")
            EVP_PKEY_keygen_init = try library.function("EVP_PKEY_keygen_init")
            EVP_PKEY_generate = try library.function("EVP_PKEY_generate")
            EVP_PKEY_CTX_set_rsa_keygen_bits = try library.function("EVP_PKEY_CTX_set_rsa_keygen_bits")
            EVP_PKEY_CTX_set_group_name = try library.function("EVP_PKEY_CTX_set_group_name")
            EVP_PKEY_get_bn_param = try library.function("EVP_PKEY_get_bn_param")
            EVP_PKEY_free = try library.function("EVP_PKEY_free")
            OSSL_PARAM_BLD_new = try library.function("OSSL_PARAM_BLD_new")
            OSSL_PARAM_BLD_free = try library.function("OSSL_PARAM_BLD_free")
            OSSL_PARAM_BLD_to_param = try library.function("OSSL_PARAM_BLD_to_param")
            OSSL_PARAM_BLD_push_BN = try library.function("OSSL_PARAM_BLD_push_BN")
            OSSL_PARAM_BLD_push_utf8_string = try library.function("OSSL_PARAM_BLD_push_utf8_string")
            OSSL_PARAM_BLD_push_octet_string = try library.function("OSSL_PARAM_BLD_push_octet_string")
            OSSL_PARAM_free = try library.function("OSSL_PARAM_free")
            EVP_Digest = try library.function("EVP_Digest")
            ERR_clear_error = try library.function("ERR_clear_error")
            EVP_PKEY_get_group_name = try library.function("EVP_PKEY_get_group_name")
            EVP_PKEY_is_a = try library.function("EVP_PKEY_is_a")
            X509_new = try library.function("X509_new")
            X509_free = try library.function("X509_free")
            d2i_X509 = try library.function("d2i_X509")
            i2d_X509 = try library.function("i2d_X509")
            X509_get0_pubkey = try library.function("X509_get0_pubkey")
            X509_get_ext_by_OBJ = try library.function("X509_get_ext_by_OBJ")
            X509_get_ext = try library.function("X509_get_ext")
            X509_EXTENSION_get_data = try library.function("X509_EXTENSION_get_data")
            ASN1_STRING_get0_data = try library.function("ASN1_STRING_get0_data")
            ASN1_STRING_length = try library.function("ASN1_STRING_length")
            OBJ_txt2obj = try library.function("OBJ_txt2obj")
            ASN1_OBJECT_free = try library.function("ASN1_OBJECT_free")
            X509_STORE_new = try library.function("X509_STORE_new")
            X509_STORE_free = try library.function("X509_STORE_free")
            X509_STORE_add_cert = try library.function("X509_STORE_add_cert")
            X509_STORE_CTX_new = try library.function("X509_STORE_CTX_new")
            X509_STORE_CTX_free = try library.function("X509_STORE_CTX_free")
            X509_STORE_CTX_init = try library.function("X509_STORE_CTX_init")
            X509_STORE_CTX_get0_param = try library.function("X509_STORE_CTX_get0_param")
            X509_VERIFY_PARAM_set_time = try library.function("X509_VERIFY_PARAM_set_time")
            X509_VERIFY_PARAM_set_depth = try library.function("X509_VERIFY_PARAM_set_depth")
            X509_verify_cert = try library.function("X509_verify_cert")
            X509_STORE_CTX_get_error = try library.function("X509_STORE_CTX_get_error")
            X509_STORE_CTX_get_error_depth = try library.function("X509_STORE_CTX_get_error_depth")
            X509_verify_cert_error_string = try library.function("X509_verify_cert_error_string")
            OPENSSL_sk_new_null = try library.function("OPENSSL_sk_new_null")
            OPENSSL_sk_push = try library.function("OPENSSL_sk_push")
            OPENSSL_sk_free = try library.function("OPENSSL_sk_free")
            X509_set_version = try library.function("X509_set_version")
            X509_get_serialNumber = try library.function("X509_get_serialNumber")
            ASN1_INTEGER_set = try library.function("ASN1_INTEGER_set")
            X509_getm_notBefore = try library.function("X509_getm_notBefore")
            X509_getm_notAfter = try library.function("X509_getm_notAfter")
            ASN1_TIME_set = try library.function("ASN1_TIME_set")
            X509_get_subject_name = try library.function("X509_get_subject_name")
            X509_NAME_add_entry_by_txt = try library.function("X509_NAME_add_entry_by_txt")
            X509_set_issuer_name = try library.function("X509_set_issuer_name")
            X509_set_pubkey = try library.function("X509_set_pubkey")
            ASN1_OCTET_STRING_new = try library.function("ASN1_OCTET_STRING_new")
            ASN1_OCTET_STRING_free = try library.function("ASN1_OCTET_STRING_free")
            ASN1_OCTET_STRING_set = try library.function("ASN1_OCTET_STRING_set")
            X509_EXTENSION_create_by_OBJ = try library.function("X509_EXTENSION_create_by_OBJ")
            X509_EXTENSION_free = try library.function("X509_EXTENSION_free")
            X509_add_ext = try library.function("X509_add_ext")
            X509_sign = try library.function("X509_sign")
        } catch {
            throw CryptoError(error.description)
        }
    }
}
