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

    /// Out of file descriptors for this process or the system.
    package var isDescriptorExhaustion: Bool { code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM }

    public var description: String {
        if call == "getaddrinfo" { return "getaddrinfo failed: \(String(cString: gai_strerror(code)))" }
        return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}
