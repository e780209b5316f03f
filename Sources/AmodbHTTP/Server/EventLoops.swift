import CSystemShims
import Dispatch
import Glibc
import Synchronization

/// A few serial queues, one per core, that every connection is spread over (like
/// swift-nio's event loops). A queue of one's own per connection would target
/// Dispatch's overcommitting root queue, and on Linux that grows a thread for every
/// busy connection (hundreds under load, each a context switch); these target the
/// non-overcommitting global queue, so the server runs on about as many threads as
/// it has cores.
final class EventLoops: Sendable {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    init(count: Int = EventLoops.usableCores()) {
        let target = DispatchQueue.global(qos: .userInitiated)
        queues = (0..<max(1, count)).map { DispatchQueue(label: "amodb-proxy.loop-\($0)", target: target) }
    }

    /// The CPUs this process may run on (`sched_getaffinity`, so `taskset` and container
    /// CPU sets count), at least 1: more loops than cores only adds context switches.
    static func usableCores() -> Int {
        let count = Int(amodb_usable_cpus())
        return count > 0 ? count : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// The queue for a new connection, round robin.
    func assign() -> DispatchQueue {
        let index = next.add(1, ordering: .relaxed).newValue
        return queues[index % queues.count]
    }
}
