import Dispatch
import Synchronization

/// Waiters for fill announcements, by cache key: each is resumed once, by the announcement
/// or by its timeout, whichever comes first.
final class FillAnnouncements: Sendable {
    private let waiters = Mutex<[String: [UInt64: CheckedContinuation<Void, Never>]]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// Returns once `key`'s fill is announced, or after `timeout`.
    func wait(for key: String, upTo timeout: Duration) async {
        let id = nextID.add(1, ordering: .relaxed).newValue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters.withLock { $0[key, default: [:]][id] = continuation }
            let nanoseconds =
                Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                resume(key, id)
            }
        }
    }

    /// Wakes every waiter for `key`.
    func announce(_ key: String) {
        let woken = waiters.withLock { $0.removeValue(forKey: key) } ?? [:]
        woken.values.forEach { $0.resume() }
    }

    /// Wakes every waiter (shutdown).
    func wakeAll() {
        let woken = waiters.withLock { waiters in
            defer { waiters = [:] }
            return waiters
        }
        woken.values.forEach { $0.values.forEach { $0.resume() } }
    }

    private func resume(_ key: String, _ id: UInt64) {
        let continuation = waiters.withLock { waiters -> CheckedContinuation<Void, Never>? in
            let found = waiters[key]?.removeValue(forKey: id)
            if waiters[key]?.isEmpty == true { waiters[key] = nil }
            return found
        }
        continuation?.resume()
    }
}
