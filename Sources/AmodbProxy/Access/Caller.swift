import AmodbHTTP

/// Who calls: the address a request comes from, whether that address is limited, the
/// credential it showed, and the proof of a genuine app it carried. The one caller type:
/// the credential check (`Callers`), the rate limit, the share of amodb's calls, the access
/// log's `user` and App Attest's exchange all read it, and its limit key is made here only.
struct Caller: Sendable {
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
    /// How the address is counted: an IPv6 address by its prefix (`AMODB_IPV6_PREFIX`).
    var network = ClientNetwork()
    var credential = Credential.none
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
    /// address (`addressKey`), and exempt addresses not at all. Built only when asked: only
    /// for those a limit counts.
    var limitKey: String? {
        switch credential {
        case .user(let user): user.limitKey
        case .attested(let name): name
        case .appToken(let name): limitedByAddress ? name + "@" + networkKey : name
        case .none: limitedByAddress ? addressKey : nil
        }
    }

    /// The key of the caller's address alone: an anonymous caller's limit, and the bucket
    /// every refused credential from the address is charged to.
    var addressKey: String { "address:" + networkKey }

    /// The caller's address as every per-address count keys it: an IPv6 address by its
    /// network (`ClientNetwork`), so the addresses of one device's /64 are one client.
    var networkKey: String { network.key(of: address) }
}

/// The answer that refuses a caller (401; 429 for an address over its rate on refusals;
/// 503 while a key set is missing), before anything else is done for its request.
struct CallerRefusal: Error, Sendable {
    let response: HTTPResponse
}
