import AmodbHTTP

/// The identify-the-caller stage: the first of a request's way through the proxy. It reads
/// the credential (`Callers`: `Authorization`, or an `api_key` app token in the query) of
/// what can reach amodb (a GET or HEAD under `/3`), before anything is answered, so that
/// the log line of an answer given later names the user too.
enum IdentifyCaller {
    /// Who sends `request`, whose context has the caller's address already, checked by
    /// `callers` at `clock`'s now: the caller with its credential and proof, or the answer
    /// that refuses it. `loop` is the event loop whose queue this runs on, for the counts.
    static func run(
        _ request: borrowing HTTPRequest, _ context: RequestContext, callers: Callers, clock: any ProxyClock
    ) -> Result<Caller, CallerRefusal> {
        var caller = context.caller
        guard callers.isEnabled && context.underAPI && (request.method == "GET" || request.method == "HEAD") else {
            return .success(caller)
        }
        let loop = context.loop
        let (verdict, carried) = callers.identifyWithProof(
            request.headers["Authorization"],
            appCheck: callers.proofs?.appCheck == nil ? nil : request.headers["X-Firebase-AppCheck"],
            query: request.query, from: caller, clock: clock, loop: loop)
        switch verdict {
        case .success(let credential): caller.credential = credential
        case .failure(let refusal):
            if callers.proofs != nil { callers.metrics.recordProof(carried, .refused, loop: loop) }
            return .failure(refusal)
        }
        guard let proofs = callers.proofs else { return .success(caller) }
        caller.proof = carried
        if carried.satisfies(proofs.policy) {
            callers.metrics.recordProof(carried, .served, loop: loop)
        } else if proofs.mode == .enforce {
            callers.metrics.recordProof(carried, .refused, loop: loop)
            return .failure(CallerRefusal(response: callers.proofRequired(proofs.policy)))
        } else {
            callers.metrics.recordProof(carried, .wouldRefuse, loop: loop)
        }
        return .success(caller)
    }
}
