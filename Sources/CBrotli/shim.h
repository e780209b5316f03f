#ifndef AMODB_CBROTLI_SHIM_H
#define AMODB_CBROTLI_SHIM_H

// Brotli (RFC 7932): libbrotlienc makes the `br` answers; libbrotlidec reads them
// back (the tests' round trips, and upstream bodies amodb sends as br).
#include <brotli/encode.h>
#include <brotli/decode.h>

#endif
