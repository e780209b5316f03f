import AmodbSockets
import CSystemShims
import Dispatch
import Glibc
import Synchronization

/// A few event loops, one per core, that every connection is spread over (like
/// swift-nio's event loops). A queue of one's own per connection would target
/// Dispatch's overcommitting root queue, and on Linux that grows a thread for every
/// busy connection (hundreds under load, each a context switch); these target the
/// non-overcommitting global queue of the socket queues' own quality (`IOQueues`), so the
/// server runs on about as many threads as it has cores, and no other work of the process
/// queues ahead of a read.
final class EventLoops: Sendable {
    private let loops: [EventLoop]
    private let next = Atomic<Int>(0)

    /// `count` loops (at least one), their queues named `<label>.loop-N`, reporting to `probe`.
    init(count: Int = EventLoops.usableCores(), label: String, probe: ServerProbe) throws(SyscallError) {
        let target = IOQueues.target
        var loops: [EventLoop] = []
        for index in 0..<max(1, count) {
            loops.append(try EventLoop(index: index, label: "\(label).loop-\(index)", target: target, probe: probe))
        }
        self.loops = loops
    }

    /// The CPUs this process may run on (`sched_getaffinity`, so `taskset` and container
    /// CPU sets count), at least 1: more loops than cores only adds context switches.
    static func usableCores() -> Int {
        let count = Int(amodb_usable_cpus())
        return count > 0 ? count : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// The loop for a new connection, round robin.
    func assign() -> EventLoop {
        let index = next.add(1, ordering: .relaxed).newValue
        return loops[index % loops.count]
    }
}
