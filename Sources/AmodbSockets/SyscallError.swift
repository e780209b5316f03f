import Glibc

/// A failed system call: which call and its `errno`.
public struct SyscallError: Error, Sendable, CustomStringConvertible {
    /// The C function that failed, e.g. `bind`.
    public let call: String
    /// `errno` as read right after the call (for `getaddrinfo`, its own error code).
    public let code: Int32

    package init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }

    /// The peer went away (`ECONNRESET`, `EPIPE`, …): normal on the internet, not worth an error log.
    package var isPeerGone: Bool {
        code == ECONNRESET || code == EPIPE || code == ENOTCONN || code == ETIMEDOUT || code == EHOSTUNREACH
    }

    /// Out of file descriptors for this process or the system.
    package var isDescriptorExhaustion: Bool { code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM }

    public var description: String {
        if call == "getaddrinfo" { return "getaddrinfo failed: \(String(cString: gai_strerror(code)))" }
        return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}
