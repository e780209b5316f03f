import AmodbHTTP

/// Who is calling: the caller's address, the credential it showed (none needed, an app
/// token, or a signed-in user's verified ID token), and the key its limits count under.
/// The one owner of "who asks": the rate limit, the share of amodb's calls and the access
/// log's `user` all read it here.
struct CallerIdentity: Sendable {
    /// What the caller showed.
    enum Credential: Sendable {
        /// Nothing: none is required (or the request cannot reach amodb).
        case none
        /// An app token, by its name for the limits (`TokenIdentifier`), never the token.
        case appToken(String)
        /// A signed-in user, verified.
        case user(UserIdentity)
        /// A genuine copy of the app with an App Attest session: its key's name (`Callers.attestedName`).
        case attested(String)
    }

    /// The caller's address: the peer's, or from `X-Forwarded-For` when the peer is trusted.
    let address: String
    /// Whether the address is limited (not in `AMODB_RATE_LIMIT_EXEMPT`).
    let limitedByAddress: Bool
    let credential: Credential
    /// The proof of a genuine app the request carried; `nil` while no proof is checked.
    var proof: Proof? = nil

    /// The verified user, if that is who calls.
    var user: UserIdentity? {
        if case .user(let user) = credential { user } else { nil }
    }

    /// The key the caller's rate limit and its share of the calls for misses count under;
    /// `nil`: no limit applies. A verified user is their own key, from any address, and two
    /// users behind one address (a carrier's NAT) are two: the limit counts the user, not the
    /// app every user shares a token with. With an app token, the token and the address;
    /// from an exempt address (loopback by default: a sidecar or a local reverse proxy
    /// speaks for many users from one address), the token alone. Without either, the
    /// address, and exempt addresses not at all. Built only when asked: only for those a
    /// limit counts.
    var limitKey: String? {
        switch credential {
        case .user(let user): user.limitKey
        case .attested(let name): name
        case .appToken(let name): limitedByAddress ? name + "@" + address : name
        case .none: limitedByAddress ? "address:" + address : nil
        }
    }
}

/// The identify-the-caller stage: the first of a request's way through the proxy. It reads
/// the credential (`Callers`: `Authorization`, or an `api_key` app token in the query) of
/// what can reach amodb (a GET or HEAD under `/3`), before anything is answered, so that
/// the log line of an answer given later names the user too.
enum IdentifyCaller {
    /// The caller, or the answer that refuses it (401; 429 for an address over its rate
    /// on refusals; 503 while the key set is missing).
    enum Outcome {
        case caller(CallerIdentity)
        case refused(HTTPResponse)

        /// The verified user, if that is who calls.
        var user: UserIdentity? {
            if case .caller(let caller) = self { caller.user } else { nil }
        }

        /// The proof the caller carried, while proofs are checked.
        var proof: Proof? {
            if case .caller(let caller) = self { caller.proof } else { nil }
        }
    }

    /// Who sends `request`, whose head reads as `head`, checked by `callers` at `clock`'s
    /// now; `loop` is the event loop whose queue this runs on, for the counts.
    static func run(
        _ request: borrowing HTTPRequest, head: HeadFacts, callers: Callers, clock: any ProxyClock, loop: Int?
    ) -> Outcome {
        let credential: CallerIdentity.Credential
        var proof: Proof? = nil
        if callers.isEnabled && head.underAPI && (request.method == "GET" || request.method == "HEAD") {
            let (verdict, carried) = callers.identifyWithProof(
                request.headers["Authorization"],
                appCheck: callers.proofs?.appCheck == nil ? nil : request.headers["X-Firebase-AppCheck"],
                query: request.query,
                from: Callers.Address(address: head.address, limited: head.limitedByAddress), clock: clock,
                loop: loop)
            proof = carried
            switch verdict {
            case .open: credential = .none
            case .token(let name): credential = .appToken(name)
            case .user(let user): credential = .user(user)
            case .attested(let name): credential = .attested(name)
            case .refused(let response):
                if callers.proofs != nil { callers.metrics.recordProof(carried, .refused, loop: loop) }
                return .refused(response)
            }
            if let proofs = callers.proofs {
                if carried.satisfies(proofs.policy) {
                    callers.metrics.recordProof(carried, .served, loop: loop)
                } else if proofs.mode == .enforce {
                    callers.metrics.recordProof(carried, .refused, loop: loop)
                    return .refused(callers.proofRequired(proofs.policy))
                } else {
                    callers.metrics.recordProof(carried, .wouldRefuse, loop: loop)
                }
            } else {
                proof = nil
            }
        } else {
            credential = .none
        }
        return .caller(
            CallerIdentity(
                address: head.address, limitedByAddress: head.limitedByAddress, credential: credential, proof: proof))
    }
}
