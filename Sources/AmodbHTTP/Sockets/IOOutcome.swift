/// Outcome of a non-blocking call: progress, or wait for readiness.
enum IOOutcome<Value> {
    case done(Value)
    case wouldBlock
}
