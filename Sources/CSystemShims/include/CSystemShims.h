#ifndef C_SYSTEM_SHIMS_H
#define C_SYSTEM_SHIMS_H

#include <sys/socket.h>

/// accept4(2), which Glibc's Swift module does not export (it needs _GNU_SOURCE).
int amodb_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

#endif
