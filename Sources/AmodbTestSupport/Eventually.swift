/// Waits until `condition` holds (polling every 10 ms) or `seconds` pass; returns whether it held.
/// For effects the code under test produces in the background (a refresh finishing).
public func eventually(within seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
