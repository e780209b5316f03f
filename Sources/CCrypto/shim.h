#ifndef AMODB_CCRYPTO_SHIM_H
#define AMODB_CCRYPTO_SHIM_H

// OpenSSL 3's libcrypto: HMAC-SHA256 (RFC 2104) and CRYPTO_memcmp for AmodbCrypto, and
// the EVP signature calls, public keys built from parameters (OSSL_PARAM_BLD) and ECDSA
// signature encoding for JSON Web Signatures. Declarations OpenSSL 3.0 deprecated are
// left out, so no code comes to depend on an API due for removal.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

// EVP_PKEY_PUBLIC_KEY and EVP_PKEY_KEYPAIR are macros of macros, which Swift does not import.
static inline int amodb_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }

#endif
