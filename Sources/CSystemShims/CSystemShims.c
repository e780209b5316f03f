#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <spawn.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
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

int amodb_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)gettid(), nice);
}

int amodb_thread_id(void) {
    return (int)gettid();
}

void amodb_configure_malloc(int arenas, int mmap_threshold) {
    mallopt(M_ARENA_MAX, arenas);
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
}

int amodb_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int amodb_epoll_ctl(int epfd, int fd, int add, uint64_t token) {
    struct epoll_event event = { .events = EPOLLIN, .data = { .u64 = token } };
    return epoll_ctl(epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &event);
}

int amodb_epoll_wait(int epfd, uint64_t *tokens, int max, long nanoseconds) {
    struct epoll_event events[128];
    if (max > 128) {
        max = 128;
    }
    // epoll_pwait2 (Linux 5.11, glibc 2.35) takes a timeout finer than epoll_wait's
    // milliseconds. Where the kernel lacks it or a seccomp profile refuses it (ENOSYS,
    // EPERM), the wait is skipped from then on, never lengthened.
    static int pwait2_refused = 0;
    int count = -1;
    if (nanoseconds > 0 && !__atomic_load_n(&pwait2_refused, __ATOMIC_RELAXED)) {
        struct timespec timeout = { .tv_sec = nanoseconds / 1000000000L, .tv_nsec = nanoseconds % 1000000000L };
        count = epoll_pwait2(epfd, events, max, &timeout, NULL);
        if (count < 0 && (errno == ENOSYS || errno == EPERM)) {
            __atomic_store_n(&pwait2_refused, 1, __ATOMIC_RELAXED);
            count = epoll_wait(epfd, events, max, 0);
        }
    } else {
        count = epoll_wait(epfd, events, max, 0);
    }
    for (int index = 0; index < count; index++) {
        tokens[index] = events[index].data.u64;
    }
    return count;
}

int amodb_pipe_cloexec(int ends[2]) {
    return pipe2(ends, O_CLOEXEC);
}

int amodb_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int amodb_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
