import AmodbHTTP

/// An answer the proxy made for a request, with how its cache answered it: the outcome
/// travels beside the response it produced, in the proxy's own type, from the forwarder to
/// the last step of the answer (`Deliver`), which renders it into `Cache-Status`
/// once and counts and logs it. The server only ever sees the response.
///
/// The response's fields are read and written through the answer (`answer.status`).
@dynamicMemberLookup
struct ProxyAnswer: Sendable {
    var response: HTTPResponse
    /// `nil` for an answer the cache had no part in (a refusal before the cache, `/healthz`).
    var cacheOutcome: CacheOutcome?

    init(_ response: consuming HTTPResponse, cacheOutcome: CacheOutcome? = nil) {
        self.response = response
        self.cacheOutcome = cacheOutcome
    }

    subscript<Value>(dynamicMember field: WritableKeyPath<HTTPResponse, Value>) -> Value {
        get { response[keyPath: field] }
        set { response[keyPath: field] = newValue }
    }
}

/// Hands an answer given later to whoever finishes it.
typealias AnswerDelivery = @Sendable (ProxyAnswer) -> Void
