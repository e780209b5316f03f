#define _GNU_SOURCE
#include <malloc.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include "CSystemShims.h"

int amodb_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(fd, address, length, flags);
}

int amodb_usable_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    return CPU_COUNT(&set);
}

int amodb_contains(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return needle_length > 0 && memmem(haystack, haystack_length, needle, needle_length) != NULL;
}

void amodb_malloc_trim(void) {
    malloc_trim(0);
}
