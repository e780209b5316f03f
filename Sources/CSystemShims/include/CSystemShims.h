#ifndef C_SYSTEM_SHIMS_H
#define C_SYSTEM_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <spawn.h>
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

/// setpriority(2) of the calling thread alone (Linux gives each thread its own nice value;
/// gettid(2) is _GNU_SOURCE): 0 or -1 with errno.
int amodb_set_thread_nice(int nice);

/// gettid(2): the calling thread's id (its /proc/self/task entry), also _GNU_SOURCE.
int amodb_thread_id(void);

/// mallopt(M_ARENA_MAX, arenas) and mallopt(M_MMAP_THRESHOLD, mmap_threshold): at most
/// `arenas` malloc arenas, and blocks from `mmap_threshold` bytes up mapped on their own
/// (a fixed threshold: glibc no longer raises it as such blocks are freed). Also
/// <malloc.h> only.
void amodb_configure_malloc(int arenas, int mmap_threshold);

/// epoll_create1(2) with EPOLL_CLOEXEC. Glibc's Swift module leaves <sys/epoll.h> out
/// (and its packed `struct epoll_event` does not import cleanly), hence these three.
int amodb_epoll_create(void);

/// epoll_ctl(2): with `add`, EPOLL_CTL_ADD of `fd` for input, level-triggered, reported
/// as `token`; without, EPOLL_CTL_DEL.
int amodb_epoll_ctl(int epfd, int fd, int add, uint64_t token);

/// epoll_wait(2): writes the tokens of up to `max` ready fds, waiting up to `nanoseconds`
/// for one (epoll_pwait2(2); 0: not at all).
int amodb_epoll_wait(int epfd, uint64_t *tokens, int max, long nanoseconds);

/// pipe2(2) with O_CLOEXEC, also _GNU_SOURCE: a pipe no other launch can leak into its child.
int amodb_pipe_cloexec(int ends[2]);

/// posix_spawn_file_actions_addchdir_np(3) (glibc >= 2.29, _GNU_SOURCE): the child changes
/// to `path` before it runs the program.
int amodb_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

/// posix_spawn_file_actions_addclosefrom_np(3) (glibc >= 2.34, _GNU_SOURCE): the child
/// closes every descriptor from `lowest` up, whether or not it is close-on-exec.
int amodb_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int lowest);

#endif
