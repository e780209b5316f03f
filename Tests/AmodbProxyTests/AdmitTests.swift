import AmodbHTTP
import AmodbModels
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// The admission stage on its own: a request value in, the next action out. No server, no
/// socket, no cache.
struct AdmitTests {
    private static let metrics = ProxyMetrics()

    /// Open access with the table's default routes, or those of `routes`; CORS for `origins`.
    private static func access(
        routes: Set<Route.Kind> = RouteTable.servedByDefault, origins: Set<String>? = nil, perMinute: Int? = nil
    ) -> ProxyDriver.Access {
        ProxyDriver.Access(
            callers: ProxyDriver.Access.anyone(metrics: metrics).callers,
            rateLimiter: perMinute.map { CallerRateLimiter(perMinute: $0, burst: 1) },
            trustedProxies: TrustedProxies(networks: []), rateLimitExempt: AddressSet(networks: []),
            cors: origins.map { CORSPolicy(origins: $0) }, routes: ServedRoutes(routes))
    }

    /// What admission makes of `target`, and the context it leaves.
    private static func admit(
        _ target: String, method: String = "GET", headers: [String: String] = [:],
        access: ProxyDriver.Access = access()
    ) throws -> (ProxyDriver.Action, RequestContext) {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name, value) }
        let request = try HTTPRequest(method: method, target: target, headers: fields, peerAddress: "192.0.2.9")
        var context = RequestContext(request, access: access, languages: AmodbLanguage.base, started: 0, loop: nil)
        let action = Admit.run(request, &context, access: access, clock: ManualClock())
        return (action, context)
    }

    /// The status of a refusal or an answer now; `nil` for any other action.
    private static func status(of action: ProxyDriver.Action) -> Int? {
        switch action {
        case .refuse(let refusal): refusal.response.status
        case .answer(let answer): answer.status
        default: nil
        }
    }

    @Test func aServedRouteIsAQuestionForTheCacheInCanonicalForm() throws {
        let (action, context) = try Self.admit("/3/movie/550?language=DE&append_to_response=videos,credits")
        guard case .lookUp = action, let query = context.query else {
            Issue.record("not a look-up: \(action)")
            return
        }
        #expect(query.key.text == "/movie/550?append_to_response=credits,videos&language=de-DE")
        #expect(query.limitKey == "address:192.0.2.9", "an anonymous caller is limited by its address")
        #expect(context.caller.address == "192.0.2.9")
        #expect(context.label == ProxyMetrics.RouteLabel(Route.Kind.movie))
    }

    @Test(
        "What admission refuses, and with which status",
        arguments: [
            ("/3/movie/550", "POST", 405), ("/3/tv/1396", "GET", 404), ("/3/nothing", "GET", 404),
            ("/elsewhere", "GET", 404), ("/3/movie/550?page=2", "GET", 200), ("/3/trending/all/day?page=0", "GET", 400),
        ])
    func refusals(target: String, method: String, status: Int) throws {
        let (action, _) = try Self.admit(target, method: method)
        if status == 200 {
            guard case .lookUp = action else {
                Issue.record("\(target): \(action)")
                return
            }
        } else {
            #expect(Self.status(of: action) == status, "\(target)")
        }
    }

    @Test func aRouteTurnedOnIsLookedUpAndTheSamePathOffIsUnserved() throws {
        let on = try Self.admit("/3/tv/1396", access: Self.access(routes: RouteTable.servedByDefault.union([.tv])))
        guard case .lookUp = on.0, let query = on.1.query else {
            Issue.record("not a look-up: \(on.0)")
            return
        }
        #expect(query.request.route == .tv(id: 1396))
        let off = try Self.admit("/3/tv/1396")
        #expect(Self.status(of: off.0) == 404)
        #expect(off.1.label == .unmatched, "a route that is off is labelled as no route")
    }

    @Test func theProxysOwnPagesGoToTheDriver() throws {
        for (path, own) in [("/healthz", OwnRoute.healthz), ("/readyz", .readyz), ("/metrics", .metrics)] {
            guard case .own(let route) = try Self.admit(path).0 else {
                Issue.record("\(path) is not the proxy's own")
                continue
            }
            #expect(route == own)
        }
        guard case .own(.attest) = try Self.admit("/attest/challenge", method: "POST").0 else {
            Issue.record("App Attest's exchange POSTs")
            return
        }
    }

    @Test func aCallerOverItsRateIsRefusedWithRetryAfter() throws {
        let access = Self.access(perMinute: 60)
        #expect(Self.status(of: try Self.admit("/3/movie/550", access: access).0) == nil)
        let (refused, _) = try Self.admit("/3/movie/550", access: access)
        #expect(Self.status(of: refused) == 429)
        guard case .refuse(let refusal) = refused else { return }
        #expect(refusal.response.headers["Retry-After"] == "1")
    }

    @Test func aPreflightIsAnsweredWhereCORSApplies() throws {
        let (action, context) = try Self.admit(
            "/3/movie/550", method: "OPTIONS", headers: ["Origin": "https://app.example"],
            access: Self.access(origins: ["https://app.example"]))
        #expect(Self.status(of: action) == 204)
        #expect(context.corsApplies)
        #expect(!context.decorates, "a preflight's answer has its own fields")
    }
}
