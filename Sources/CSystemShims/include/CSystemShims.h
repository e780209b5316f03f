#ifndef C_SYSTEM_SHIMS_H
#define C_SYSTEM_SHIMS_H

#include <stddef.h>
#include <sys/socket.h>

/// accept4(2), which Glibc's Swift module does not export (it needs _GNU_SOURCE).
int amodb_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// The number of CPUs this process may run on (sched_getaffinity(2) and CPU_COUNT,
/// both _GNU_SOURCE), or -1 if it cannot be read.
int amodb_usable_cpus(void);

/// Whether `needle` occurs in `haystack`: memmem(3), also _GNU_SOURCE.
int amodb_contains(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// malloc_trim(3) with no padding: glibc's extension, declared in <malloc.h>, which
/// Glibc's Swift module leaves out.
void amodb_malloc_trim(void);

#endif
