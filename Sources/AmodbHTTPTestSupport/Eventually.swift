#if canImport(Glibc)
    import Glibc
#endif

/// Waits until `condition` holds (polling every 10 ms) or `seconds` pass; returns whether it held.
/// For effects the code under test produces in the background (a refresh finishing). The
/// condition may itself be async (a request to the proxy under test); the limit is generous
/// because a green run must not depend on how busy the machine is, and it costs nothing
/// when the condition holds.
public func eventually(within seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// `eventually` for blocking test code (raw sockets on an offloaded thread): polls every
/// millisecond until `condition` holds or `seconds` pass; returns whether it held.
public func eventuallyBlocking(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}
