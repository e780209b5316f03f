#ifndef AMODB_CZLIB_SHIM_H
#define AMODB_CZLIB_SHIM_H

// zlib, for gzip (RFC 1952) answers: deflate to make them, inflate to read them.
#include <zlib.h>

/// deflateInit2 for a gzip member: deflateInit2 is a macro Swift cannot call, and
/// windowBits 15 + 16 asks zlib for the gzip header and CRC32/ISIZE trailer
/// instead of a zlib wrapper. memLevel 8 and the default strategy, as gzip(1).
static inline int amodb_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// inflateInit2 for gzip members only (windowBits 15 + 16): a body labelled gzip
/// that is a bare zlib or deflate stream is refused rather than guessed at.
static inline int amodb_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}

#endif
