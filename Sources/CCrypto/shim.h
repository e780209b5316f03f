#ifndef AMODB_CCRYPTO_SHIM_H
#define AMODB_CCRYPTO_SHIM_H

// OpenSSL 3's libcrypto: HMAC-SHA256 (RFC 2104) and CRYPTO_memcmp for AmodbCrypto;
// signature verification (EVP) is in the same library. Declarations OpenSSL 3.0
// deprecated are left out, so no code comes to depend on an API due for removal.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#endif
