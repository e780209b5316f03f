#if canImport(Glibc)
    import Glibc
#endif

/// `recv(2)` and `send(2)` on a blocking socket of a test's own stand-in (a key set server,
/// a misbehaving amodb, a hostile Redis), so the stand-ins handle bytes, never pointers.
public enum BlockingSocket {
    /// `recv(2)` into `buffer` (up to its count), `EINTR` retried: the bytes read, 0 at end
    /// of stream, or -1 with `errno` set.
    public static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            return count
        }
    }

    /// `send(2)` with `MSG_NOSIGNAL` until every byte of `bytes` is sent, `EINTR` retried;
    /// `sent` hears each write's count. False when the peer has gone (`errno` says how).
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8], sent: (Int) -> Void = { _ in }) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
            sent(count)
        }
        return true
    }
}
