package import CSystemShims
package import Glibc

/// The one home of the libc socket calls, for the HTTP server and the Redis client alike.
/// Each wrapper names the call it wraps, reads `errno` right after it (`@inline(never)` so
/// nothing runs in between), retries `EINTR` (except on `close`) and returns "would block"
/// as a value.
package enum Syscalls {
    /// `socket(2)`, non-blocking and close-on-exec.
    @inline(never)
    package static func socket(domain: Int32) throws(SyscallError) -> Int32 {
        let fd = Glibc.socket(
            domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SyscallError("socket", errno) }
        return fd
    }

    /// `setsockopt(2)` with an `Int32` value.
    @inline(never)
    package static func setsockopt(_ fd: Int32, level: Int32, option: Int32, value: Int32) throws(SyscallError) {
        var value = value
        guard Glibc.setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SyscallError("setsockopt", errno)
        }
    }

    /// `bind(2)`.
    @inline(never)
    package static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) throws(SyscallError)
    {
        guard Glibc.bind(fd, address, length) == 0 else { throw SyscallError("bind", errno) }
    }

    /// `listen(2)`.
    @inline(never)
    package static func listen(_ fd: Int32, backlog: Int32) throws(SyscallError) {
        guard Glibc.listen(fd, backlog) == 0 else { throw SyscallError("listen", errno) }
    }

    /// `getsockname(2)`: the port the kernel bound (for port 0).
    @inline(never)
    package static func boundPort(_ fd: Int32) throws(SyscallError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw SyscallError("getsockname", errno) }
        return SocketAddress(storage).port
    }

    /// `accept4(2)` with `SOCK_NONBLOCK | SOCK_CLOEXEC`: the new fd and the peer's address and port.
    /// `ECONNABORTED` (the peer left before we accepted) is retried like `EINTR`.
    @inline(never)
    package static func accept(_ fd: Int32) throws(SyscallError) -> IOOutcome<(fd: Int32, peer: String, port: Int)> {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    amodb_accept4(fd, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if client >= 0 {
                let address = SocketAddress(storage)
                return .done((client, address.host, address.port))
            }
            let code = errno
            switch code {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SyscallError("accept4", code)
            }
        }
    }

    /// `connect(2)` on a non-blocking socket: `.wouldBlock` is `EINPROGRESS` (wait for
    /// writability, then read `pendingError`).
    @inline(never)
    package static func connect(_ fd: Int32, _ address: SocketAddress) throws(SyscallError) -> IOOutcome<Void> {
        let result = try address.withSockaddr { pointer, length in Glibc.connect(fd, pointer, length) }
        if result == 0 { return .done(()) }
        let code = errno
        switch code {
        case EINPROGRESS, EINTR: return .wouldBlock  // after EINTR the connect goes on in the background
        default: throw SyscallError("connect", code)
        }
    }

    /// `getsockopt(2)` of `SO_ERROR`: how a non-blocking connect ended (0 is success).
    @inline(never)
    package static func pendingError(_ fd: Int32) throws(SyscallError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else {
            throw SyscallError("getsockopt", errno)
        }
        return value
    }

    /// `getaddrinfo(3)` for the TCP addresses of `host`. It blocks (DNS): call it on a thread
    /// of its own, never on a queue that serves connections.
    package static func resolve(host: String, port: Int) throws(SyscallError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0 else { throw SyscallError("getaddrinfo", code) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let address = SocketAddress(entry.pointee.ai_addr, length: entry.pointee.ai_addrlen) {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    /// `recv(2)` from a socket into a buffer; `.done(0)` is the peer's end of stream.
    /// `recv`, not `read(2)`: the same bytes, without the file layer's checks that `read`
    /// passes through on every call (`vfs_read`), once per request on the hit path.
    @inline(never)
    package static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SyscallError)
        -> IOOutcome<Int>
    {
        while true {
            let count = Glibc.recv(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return .done(count) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SyscallError("recv", code)
            }
        }
    }

    /// `send(2)` with `MSG_NOSIGNAL`, so a closed peer is `EPIPE` and never `SIGPIPE`.
    @inline(never)
    package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SyscallError) -> IOOutcome<Int> {
        while true {
            let count = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .done(count) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SyscallError("send", code)
            }
        }
    }

    /// `sendmsg(2)` of several buffers at once (gather), with `MSG_NOSIGNAL`: a response
    /// head and the body it references go out in one call, without copying them together.
    @inline(never)
    package static func sendmsg(_ fd: Int32, _ buffers: UnsafeMutableBufferPointer<iovec>) throws(SyscallError)
        -> IOOutcome<Int>
    {
        var message = msghdr()
        message.msg_iov = buffers.baseAddress
        message.msg_iovlen = buffers.count
        while true {
            let count = Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .done(count) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SyscallError("sendmsg", code)
            }
        }
    }

    /// `epoll_create1(2)` with `EPOLL_CLOEXEC`: a readiness set of our own (`ReadinessPoller`).
    @inline(never)
    package static func epollCreate() throws(SyscallError) -> Int32 {
        let fd = amodb_epoll_create()
        guard fd >= 0 else { throw SyscallError("epoll_create1", errno) }
        return fd
    }

    /// `epoll_ctl(2)` `EPOLL_CTL_ADD`: `fd` is reported as `token` while it has input
    /// (level-triggered: nothing to re-arm after each event).
    @inline(never)
    package static func epollAdd(_ epollFD: Int32, _ fd: Int32, token: UInt64) throws(SyscallError) {
        guard amodb_epoll_ctl(epollFD, fd, 1, token) == 0 else { throw SyscallError("epoll_ctl", errno) }
    }

    /// `epoll_ctl(2)` `EPOLL_CTL_DEL`. Only fails for an fd that is not in the set, which
    /// the caller's bookkeeping rules out, so nothing is reported.
    @inline(never)
    package static func epollRemove(_ epollFD: Int32, _ fd: Int32) {
        _ = amodb_epoll_ctl(epollFD, fd, 0, 0)
    }

    /// `epoll_wait(2)`: how many tokens of ready fds it wrote, waiting up to `nanoseconds`
    /// for one (none by default: Dispatch already said the set is ready). `EINTR` is
    /// retried; any other error is on our own fd, a bug, and reads as nothing ready.
    @inline(never)
    package static func epollWait(
        _ epollFD: Int32, into tokens: UnsafeMutableBufferPointer<UInt64>, waitingAtMost nanoseconds: Int = 0
    ) -> Int {
        while true {
            let count = amodb_epoll_wait(epollFD, tokens.baseAddress, Int32(tokens.count), nanoseconds)
            if count >= 0 { return Int(count) }
            guard errno == EINTR else { return 0 }
        }
    }

    /// `setsockopt(2)` of `TCP_NODELAY`: each write leaves at once. With Nagle's algorithm
    /// on, an answer written while an earlier one is unacknowledged waits for the client's
    /// delayed ACK (up to 40 ms on Linux), which stalls pipelined answers;
    /// Redis commands are small and latency-bound too. A failure is harmless (writes only
    /// go slower), so it is not reported.
    @inline(never)
    package static func disableNagle(_ fd: Int32) {
        var on: Int32 = 1
        _ = Glibc.setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// `setsockopt(2)` of `SO_LINGER` on with a zero timeout: the next `close` sends a reset
    /// and frees the socket's buffers at once, instead of an orderly end (nginx's
    /// `reset_timedout_connection`, for peers that are dropped, not answered).
    @inline(never)
    package static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = Glibc.setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// `malloc_trim(3)`: hands the allocator's free memory back to the system, after many
    /// connections closed at once (glibc keeps freed heap pages otherwise).
    package static func trimAllocator() {
        amodb_malloc_trim()
    }

    /// Lowers the calling thread's scheduling priority to `nice` (`setpriority(2)` of this
    /// thread alone), for background work that must yield the core to the event loops.
    /// Best effort: a refusal leaves the thread as it was.
    package static func lowerThreadPriority(nice: Int32) {
        _ = amodb_set_thread_nice(nice)
    }

    /// `gettid(2)`: the calling thread's id, its entry under `/proc/self/task`.
    package static func threadID() -> Int32 {
        amodb_thread_id()
    }

    /// `shutdown(2)` of our sending side: the peer reads end of stream after what was sent.
    @inline(never)
    package static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// `close(2)`. Never retried on `EINTR`: on Linux the fd is gone either way.
    @inline(never)
    package static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Ignores `SIGPIPE` for the whole process; sends also pass `MSG_NOSIGNAL`.
    package static func ignoreSIGPIPE() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft limit in force.
    @discardableResult
    package static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(raised.rlim_cur) }
        }
        return Int(limit.rlim_cur)
    }
}
