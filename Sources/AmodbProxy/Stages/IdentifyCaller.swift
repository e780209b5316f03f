import AmodbHTTP

/// The identify-the-caller stage: the first of a request's way through the proxy. It reads
/// the credential (`Callers`: `Authorization`, or an `api_key` app token in the query) of
/// what can reach amodb (a GET or HEAD under `/3`), before anything is answered, so that
/// the log line of an answer given later names the user too.
enum IdentifyCaller {
    /// Who sends `request`, checked by `callers` at `clock`'s now: `caller` (its address
    /// read already) gets its credential and proof, or the answer that refuses it is
    /// returned. `loop` is the event loop whose queue this runs on, for the counts.
    static func run(
        _ request: borrowing HTTPRequest, _ caller: inout Caller, underAPI: Bool, loop: Int?, callers: Callers,
        clock: any ProxyClock
    ) -> CallerRefusal? {
        guard callers.isEnabled && underAPI && (request.method == "GET" || request.method == "HEAD") else {
            return nil
        }
        let (verdict, carried) = callers.identifyWithProof(
            request.headers["Authorization"],
            appCheck: callers.proofs?.appCheck == nil ? nil : request.headers["X-Firebase-AppCheck"],
            query: request.query, from: caller, clock: clock, loop: loop)
        switch verdict {
        case .success(let credential): caller.credential = credential
        case .failure(let refusal):
            if callers.proofs != nil { callers.metrics.recordProof(carried, .refused, loop: loop) }
            return refusal
        }
        guard let proofs = callers.proofs else { return nil }
        caller.proof = carried
        if carried.satisfies(proofs.policy) {
            callers.metrics.recordProof(carried, .served, loop: loop)
        } else if proofs.mode == .enforce {
            callers.metrics.recordProof(carried, .refused, loop: loop)
            return CallerRefusal(response: callers.proofRequired(proofs.policy))
        } else {
            callers.metrics.recordProof(carried, .wouldRefuse, loop: loop)
        }
        return nil
    }
}
