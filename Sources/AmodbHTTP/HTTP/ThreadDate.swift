import Glibc

/// One thread's rendered `Date` field and the second it is for (`HTTPDate`): found through
/// a POSIX thread-specific key, made on the thread's first answer and freed when the thread
/// exits. Only its own thread ever reads or writes it, so it needs no lock, and its properties
/// are not checked for exclusive access at run time: that check, a runtime call on every
/// read of a class's property, would cost every answer more than copying the field.
final class ThreadDate {
    /// The second `field` holds; `Int.min` before the first.
    @exclusivity(unchecked) var second = Int.min
    /// The field's bytes (`HTTPDate.fieldLength`), written over when the second changes.
    @exclusivity(unchecked) var field = [UInt8](repeating: 0, count: HTTPDate.fieldLength)

    private init() {}

    /// The key under which each thread keeps its own; the destructor releases it at exit.
    /// `nil` if the process has no key left (then every answer renders its own field).
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<ThreadDate>.fromOpaque(pointer).release()
        }
        return created == 0 ? key : nil
    }()

    /// This thread's copy, made on first use; `nil` without a key.
    static var current: ThreadDate? {
        guard let key else { return nil }
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadDate>.fromOpaque(pointer).takeUnretainedValue()
        }
        let date = ThreadDate()
        guard pthread_setspecific(key, Unmanaged.passRetained(date).toOpaque()) == 0 else {
            Unmanaged.passUnretained(date).release()
            return nil
        }
        return date
    }
}
