import AmodbSockets
import Dispatch
import Glibc

/// Turns the endpoint's host into addresses without blocking a shared queue: an IP literal
/// at once, a host name with `getaddrinfo` on a short-lived thread of its own (DNS can take
/// seconds; a Dispatch worker blocked that long would starve the event loops).
enum RedisResolver {
    /// Calls `completion` on `queue` with the addresses of `host`, or the failure.
    static func resolve(
        host: String, port: Int, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<[SocketAddress], SyscallError>) -> Void
    ) {
        if let literal = SocketAddress(host: host, port: port) {
            queue.async { completion(.success([literal])) }
            return
        }
        let started = startThread {
            let result = Result { () throws(SyscallError) in try Syscalls.resolve(host: host, port: port) }
            queue.async { completion(result) }
        }
        if let failure = started {
            queue.async { completion(.failure(failure)) }
        }
    }

    /// What the new thread runs; retained across `pthread_create`, released by the thread.
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// `pthread_create(3)` of a detached thread running `body`; the error if it could not start.
    /// (Foundation's `Thread` would do, but this module stays free of Foundation.)
    private static func startThread(_ body: @escaping @Sendable () -> Void) -> SyscallError? {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, work)
        guard code == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            return SyscallError("pthread_create", code)
        }
        pthread_detach(thread)
        return nil
    }
}
