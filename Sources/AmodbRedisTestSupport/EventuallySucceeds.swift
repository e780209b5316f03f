/// Retries `body` until it stops throwing, for up to `seconds`: for Redis coming back after
/// a restart, when only a command that succeeds shows the client has reconnected.
package func eventuallySucceeds(within seconds: Int = 10, _ body: () async throws -> Void) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if (try? await body()) != nil { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return false
}
