/// Something a test starts and must stop before the test ends.
public protocol ScopedServer: Sendable {
    /// Stops it; returns once it no longer serves.
    func shutdown() async
}

/// Runs `body` with `server` and awaits its shutdown afterwards, whether `body` returns
/// or throws: no server of one test keeps running into the next
/// (`defer { Task { await server.shutdown() } }` does not wait).
public func withServer<Server: ScopedServer, Result>(
    _ server: Server, _ body: (Server) async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
    return result
}
