package import AmodbHTTPTestSupport
package import AmodbSandbox

extension ProxyHarness: ScopedServer {}
extension SandboxedProxy: ScopedServer {}
extension AmodbSandbox: ScopedServer {
    /// Stops the stand-in, letting answers in flight finish for up to a second.
    package func shutdown() async { await shutdown(gracePeriod: 1) }
}
