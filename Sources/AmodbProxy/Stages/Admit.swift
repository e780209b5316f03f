import AmodbHTTP
import AmodbModels

/// The admission stage: what a request is, before the cache is asked. A CORS preflight is
/// answered; a method other than GET and HEAD is refused (App Attest's exchange, which
/// POSTs, aside); the proxy's own pages go to the driver; a path under `/3` that names no
/// route served, a caller refused (`IdentifyCaller`) or over its rate, and a query amodb
/// would refuse, are refused here; anything else is a question for the cache. Its caller
/// is written into the context, for the access log of an answer given later.
enum Admit {
    static func run(
        _ request: borrowing HTTPRequest, _ context: inout RequestContext, access: ProxyDriver.Access,
        clock: any ProxyClock
    ) -> ProxyDriver.Action {
        if request.method == "OPTIONS", context.corsApplies, let cors = access.cors {
            let requested = request.headers.values("Access-Control-Request-Headers")
            return .answer(
                ProxyAnswer(
                    cors.preflight(
                        origin: context.origin,
                        requestedHeaders: requested.count > 1 ? requested.joined(separator: ",") : requested.first)))
        }
        if context.corsApplies, let refusal = access.cors?.refusal(ofRequestFrom: context.origin) {
            return .refuse(refusal)
        }
        if context.own == .attest { return .own(.attest) }
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = HTTPHeaders()
            headers.set("Allow", context.corsApplies ? "GET, HEAD, OPTIONS" : "GET, HEAD")
            return .refuse(
                APIRefusal(.methodNotAllowed, "Method \(request.method) is not allowed; use GET.", headers: headers))
        }
        if let own = context.own {
            if own.isOperatorPage, context.caller.limitedByAddress,
                let wait = access.operatorPages.limiter.take(
                    "operator:" + context.caller.networkKey, now: clock.now())
            {
                return .refuse(
                    .tooManyRequests(
                        { "Too many requests for the operator's pages from this address; try again in \($0) s." },
                        wait: wait))
            }
            return .own(own)
        }
        guard context.underAPI else {
            return .refuse(
                .unserved(context.loggedPath ?? LoggedPath.of(target: request.target), served: access.routes))
        }
        if let refusal = IdentifyCaller.run(
            request, &context.caller, underAPI: context.underAPI, loop: context.loop, callers: access.callers,
            clock: clock)
        {
            return .answer(ProxyAnswer(refusal.response))
        }
        // Within the caller's rate (`Caller.limitKey`: who a limit counts), or refused.
        let limitKey = context.caller.limitKey
        if let limitKey, let wait = access.rateLimiter?.take(limitKey, now: clock.now()) {
            return .refuse(
                .tooManyRequests({ "Too many requests from this client; try again in \($0) s." }, wait: wait))
        }
        if let problem = context.problem { return .refuse(APIRefusal(.invalidParameter, problem.description)) }
        guard context.query != nil else {
            // A path under `/3` that names no route served: within the caller's rate, like
            // any other, so that a flood of made-up paths is limited too.
            return .refuse(
                .unserved(context.loggedPath ?? LoggedPath.of(target: request.target), served: access.routes))
        }
        // Each client's share of the calls for misses follows the same exemption as its rate.
        context.query?.limitKey = limitKey
        return .lookUp
    }
}
