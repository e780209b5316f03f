/// Outcome of a non-blocking call: progress, or wait for readiness.
package enum IOOutcome<Value> {
    /// The call made progress: its result.
    case done(Value)
    /// The socket is not ready; wait for its readiness.
    case wouldBlock
}
