public import Dispatch

/// Where the queues that multiplex sockets run: the HTTP server's accept queue and event
/// loops, and the Redis client's connections. They never compute for long and everything
/// else waits on them, so they share a root queue above the default one: the process's
/// default work (the proxy's fills and refreshes, or a test suite's many tests running at
/// once) cannot queue an accept or a read behind it.
public enum IOQueues {
    /// The quality of service of every socket-multiplexing queue.
    public static let qos = DispatchQoS.QoSClass.userInitiated

    /// The non-overcommitting global queue of that quality: as many threads as cores, shared
    /// by every queue that targets it.
    public static var target: DispatchQueue { .global(qos: qos) }
}
