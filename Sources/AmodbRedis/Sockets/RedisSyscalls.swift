import Glibc

/// Outcome of a non-blocking call: progress, or wait for readiness.
enum RedisIO<Value> {
    /// The call made progress: its result.
    case done(Value)
    /// The socket is not ready; wait for its Dispatch source.
    case wouldBlock
}

/// The libc calls a Redis connection makes, in one place, as `AmodbProxy`'s `Syscalls` does
/// for the server (this module cannot import it): each reads `errno` right after the call
/// (`@inline(never)`), retries `EINTR` (except on `close`) and returns "would block" as a value.
enum RedisSyscalls {
    /// `socket(2)`, non-blocking and close-on-exec.
    @inline(never)
    static func socket(domain: Int32) throws(RedisSocketError) -> Int32 {
        let fd = Glibc.socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RedisSocketError("socket", errno) }
        return fd
    }

    /// `setsockopt(2)` of `TCP_NODELAY`: commands are small and latency-bound, Nagle would hold them.
    @inline(never)
    static func setNoDelay(_ fd: Int32) throws(RedisSocketError) {
        var one: Int32 = 1
        guard Glibc.setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw RedisSocketError("setsockopt", errno)
        }
    }

    /// `connect(2)` on a non-blocking socket: `.wouldBlock` is `EINPROGRESS` (wait for writability,
    /// then read `SO_ERROR`).
    @inline(never)
    static func connect(_ fd: Int32, _ address: RedisSocketAddress) throws(RedisSocketError) -> RedisIO<Void> {
        let result = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        if result == 0 { return .done(()) }
        let code = errno
        switch code {
        case EINPROGRESS, EINTR: return .wouldBlock   // after EINTR the connect goes on in the background
        default: throw RedisSocketError("connect", code)
        }
    }

    /// `getsockopt(2)` of `SO_ERROR`: how a non-blocking connect ended (0 is success).
    @inline(never)
    static func pendingError(_ fd: Int32) throws(RedisSocketError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { throw RedisSocketError("getsockopt", errno) }
        return value
    }

    /// `read(2)` into a buffer; `.done(0)` is the peer's end of stream.
    @inline(never)
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RedisSocketError) -> RedisIO<Int> {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return .done(count) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw RedisSocketError("read", code)
            }
        }
    }

    /// `send(2)` with `MSG_NOSIGNAL`, so a closed peer is `EPIPE` and never `SIGPIPE`.
    @inline(never)
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(RedisSocketError) -> RedisIO<Int> {
        while true {
            let count = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .done(count) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw RedisSocketError("send", code)
            }
        }
    }

    /// `close(2)`. Never retried on `EINTR`: on Linux the fd is gone either way.
    @inline(never)
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// `getaddrinfo(3)` for a TCP address of `host`. It blocks (DNS), so it runs on a thread of
    /// its own (`RedisResolver`), never on a connection's queue.
    static func resolve(host: String, port: Int) throws(RedisSocketError) -> [RedisSocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0 else { throw RedisSocketError("getaddrinfo", code) }
        defer { freeaddrinfo(list) }
        var addresses: [RedisSocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let address = RedisSocketAddress(entry.pointee.ai_addr, length: entry.pointee.ai_addrlen) { addresses.append(address) }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}
