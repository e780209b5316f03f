#if canImport(Glibc)
    import Glibc
#endif

/// Waits until `condition` holds or `seconds` pass; returns whether it held. For effects the
/// code under test produces in the background (a refresh finishing). The condition may itself
/// be async (a request to the proxy under test). The limit is generous because a green run
/// must not depend on how busy the machine is, and it costs nothing when the condition holds:
/// the suite runs sixteen test cases at once on two cores (`CTestParallelism`), and beside
/// another busy process a fill has waited more than ten seconds for a thread.
///
/// It polls after 10 ms, then less and less often (up to every 100 ms), and never spends more
/// than half its time in the condition: a condition that costs milliseconds (a `/metrics`
/// scrape parsed in a debug build) polled in a tight loop by many tests at once would hold
/// the concurrency pool the code under test needs to make it true.
public func eventually(within seconds: Double = 30, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int(seconds * 1000))
    var pause = Duration.milliseconds(10)
    while clock.now < deadline {
        let start = clock.now
        if try await condition() { return true }
        let spent = clock.now - start
        try? await Task.sleep(for: max(pause, spent))
        pause = min(pause * 2, .milliseconds(100))
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
