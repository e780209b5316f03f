import AmodbHTTP

extension HTTPResponse {
    /// How the cache answered, for the proxy's routes: carried in the response's annotation
    /// (the server never reads it), rendered into `Cache-Status` once when the response is
    /// finished, and read (never parsed back) by metrics and logs.
    var cacheOutcome: CacheOutcome? {
        get { CacheOutcome(annotation: annotation) }
        set { annotation = newValue?.annotation ?? 0 }
    }
}
