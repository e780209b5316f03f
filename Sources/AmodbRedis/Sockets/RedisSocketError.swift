import Glibc

/// A failed system call on a Redis connection: which call and its `errno`.
struct RedisSocketError: Error, Sendable, CustomStringConvertible {
    /// The C function that failed, e.g. `connect`.
    let call: String
    /// `errno` as read right after the call (or the `getaddrinfo` code for name lookups).
    let code: Int32

    /// The failure of `call` with `code`.
    init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }

    var description: String {
        if call == "getaddrinfo" { return "getaddrinfo failed: \(String(cString: gai_strerror(code)))" }
        return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}
