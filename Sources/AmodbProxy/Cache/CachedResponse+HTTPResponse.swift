extension CachedResponse {
    /// This entry as an answer: the body, its age and remaining freshness, its validator,
    /// and how the cache served it.
    func response(at now: Double, outcome: CacheOutcome) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json;charset=utf-8")
        headers.add("Cache-Control", "public, max-age=\(max(0, remainingLifetime(at: now)))")
        headers.add("Age", String(age(at: now)))
        if status == 200 { headers.add("ETag", etag) }
        var response = HTTPResponse(status: status, headers: headers, body: body)
        response.cacheOutcome = outcome
        return response
    }
}
