import AmodbModels

/// Decides whether an amodb 200 may be stored and served. It refuses only what would
/// make a stored copy useless or dangerous for every user for the cache's lifetime:
/// - a body that is not complete, well-formed UTF-8 JSON (truncated, garbled);
/// - the wrong top-level kind for the route: a movie must be an object whose `id` is
///   the id asked for (so `/movie/5` never serves movie 550), a trending page an
///   object with a `results` array, the configuration an object with an `images` object;
/// - amodb's JSON error object (`"success": false` with a `status_code`) sent with 200;
/// - the key, written plainly or with JSON escapes (a client's parser would decode it).
///
/// Everything else is amodb's to change (a new nested shape, a number sent as a
/// string): it is stored and served byte for byte. A body the shared models cannot
/// decode is reported to `schema` (counted, logged now and then), not refused.
struct AnswerValidator: Sendable {
    let key: Secret
    /// Where bodies that pass but do not decode as `AmodbModels` are reported; `nil`: nowhere.
    let schema: SchemaMismatchReporter?

    /// The top-level members the checks read.
    private static let watched: Set<String> = ["id", "results", "images", "genres", "success", "status_code"]

    /// A validator that keeps `key` out of what is stored and reports schema drift to `schema`.
    init(key: Secret, schema: SchemaMismatchReporter? = nil) {
        self.key = key
        self.schema = schema
    }

    /// Why the body must not be served, or `nil` when it is fine. Never quotes the body.
    func problem(with body: [UInt8], for route: Route) -> String? {
        let summary: JSONScanner.Summary
        switch keyFreeJSON(body) {
        case .failure(let refusal): return refusal.reason
        case .success(let scanned): summary = scanned
        }
        guard summary.topLevel == .object else { return "the body is not a JSON object" }
        if summary.members["success"]?.kind == .false, summary.members["status_code"] != nil {
            return "the body is amodb's error object, sent with status 200"
        }
        switch route.entry.answer {
        case .page:
            guard summary.members["results"]?.kind == .array else { return "the page has no results array" }
        case .details:
            let id = route.id ?? 0
            guard let member = summary.members["id"], member.kind == .number || member.kind == .string,
                member.text == String(id)
            else { return "the body is not \(route.entry.name) \(id)" }
        case .configuration:
            // Apps build every image URL from it: without it the answer is useless to them.
            guard summary.members["images"]?.kind == .object else { return "the configuration has no images object" }
        case .genres:
            guard summary.members["genres"]?.kind == .array else { return "the genre list has no genres array" }
        }
        schema?.check(body, for: route)
        return nil
    }

    /// Why a stored 404 body must not be served: the proxy stores its own error object
    /// for amodb's 404, so anything else (the key, a movie) was not written by it.
    func problem(withNotFound body: [UInt8]) -> String? {
        switch keyFreeJSON(body) {
        case .failure(let refusal):
            return refusal.reason
        case .success(let summary):
            guard summary.topLevel == .object, summary.members["success"]?.kind == .false,
                summary.members["status_code"]?.kind == .number
            else { return "the body is not an error object" }
            return nil
        }
    }

    private struct Refusal: Error {
        let reason: String
    }

    /// The body's summary, if it is well-formed JSON without the key in any spelling.
    private func keyFreeJSON(_ body: [UInt8]) -> Result<JSONScanner.Summary, Refusal> {
        // The literal check first: memmem over the raw bytes is the cheap common case;
        // the scanner decodes only strings written with escapes.
        let needle = Array(key.revealed.utf8)
        if ByteSearch.contains(body, needle) { return .failure(Refusal(reason: "the body contains the API key")) }
        let summary: JSONScanner.Summary
        do {
            summary = try JSONScanner.scan(body, watching: Self.watched, needle: needle)
        } catch {
            return .failure(Refusal(reason: "the body is not complete, well-formed JSON: \(error)"))
        }
        if summary.needleInEscapedString {
            return .failure(Refusal(reason: "the body contains the API key, written with JSON escapes"))
        }
        return .success(summary)
    }
}
