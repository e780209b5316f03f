package import AmodbModels
package import AmodbProxy
import Synchronization

/// An `UpstreamFetcher` that answers from a script and counts calls per path, for
/// tests of the cache and error mapping without sockets to amodb.
package final class ScriptedUpstream: UpstreamFetcher {
    /// One scripted answer.
    package enum Answer: Sendable {
        case response(UpstreamResponse)
        case failure(UpstreamError)

        /// An answer with `status`, `body` (as UTF-8) and `headers`: `.status(404, "{}")`.
        package static func status(_ status: Int, _ body: String = "", headers: [String: String] = [:]) -> Answer {
            .response(UpstreamResponse(status: status, headers: headers, body: Array(body.utf8)))
        }
    }

    private struct State {
        var queue: [Answer] = []
        var fallback: Answer
        var delayNanoseconds: UInt64 = 0
        var calls: [String] = []
        var callInstants: [ContinuousClock.Instant] = []
        /// While set, calls wait here until `release()` (or a later `open()`).
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    /// By default every call answers `fallback`.
    package init(
        fallback: Answer = .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.moviePage.utf8)))
    ) {
        state = Mutex(State(fallback: fallback))
    }

    /// The next calls answer these, in order, before falling back.
    package func enqueue(_ answers: Answer...) {
        state.withLock { $0.queue.append(contentsOf: answers) }
    }

    /// Every later call answers this.
    package func setFallback(_ answer: Answer) {
        state.withLock { $0.fallback = answer }
    }

    /// Each call waits this long before answering.
    package func setDelay(milliseconds: Int) {
        state.withLock { $0.delayNanoseconds = UInt64(milliseconds) * 1_000_000 }
    }

    /// Paths and queries asked for, in order.
    package var calls: [String] { state.withLock { $0.calls } }

    /// When each call came, in the order of `calls`.
    package var callInstants: [ContinuousClock.Instant] { state.withLock { $0.callInstants } }

    /// Calls that arrive from now on wait until the test releases them: a test can then
    /// act while a fetch is known to be in flight, without guessing with sleeps.
    package func hold() {
        state.withLock { $0.holding = true }
    }

    /// Lets every held call answer; later calls are held again only after `hold()`.
    package func release() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in waiting { continuation.resume() }
    }

    /// How many calls are waiting on `hold()` now.
    package var heldCount: Int { state.withLock { $0.held.count } }

    package func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                state.calls.append(request.pathAndQuery)
                state.callInstants.append(.now)
                guard state.holding else { return true }
                state.held.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        let (answer, delay) = state.withLock { state -> (Answer, UInt64) in
            (state.queue.isEmpty ? state.fallback : state.queue.removeFirst(), state.delayNanoseconds)
        }
        if delay > 0 { try? await Task.sleep(nanoseconds: delay) }
        switch answer {
        case .response(var response):
            // The proxy refuses a movie other than the one asked for, so the stock movie
            // stands for whichever movie the call names.
            if case .movie(let id) = request.route, response.body.elementsEqual(Self.movieDetails.utf8) {
                response.body = Array(Self.movieDetails(id: id).utf8)
            }
            return .success(response)
        case .failure(let error): return .failure(error)
        }
    }

    /// amodb's answer to a key it refuses (with 401) or to an expired plan (402).
    package static let keyRejected = #"{"success":false,"status_code":7,"status_message":"Invalid API key"}"#

    /// A small but valid trending page.
    package static let moviePage = """
        {"page":1,"results":[{"id":550,"media_type":"movie","title":"Fight Club","original_title":"Fight Club","overview":"","poster_path":null,"release_date":"1999-10-15","vote_average":8.4,"vote_count":30000,"popularity":60.1,"genre_ids":[18],"adult":false,"original_language":"en","video":false}],"total_pages":1,"total_results":1}
        """

    /// A small but valid `/configuration` body.
    package static let configuration = """
        {"images":{"base_url":"http://img.amodb.dev/t/p/","secure_base_url":"https://img.amodb.dev/t/p/","poster_sizes":["w92","w500","original"]},"change_keys":["title"]}
        """

    /// A small but valid movie details body, movie 550. Scripted as the answer to a call
    /// for another movie, it is sent as `movieDetails(id:)` of that movie.
    package static let movieDetails = movieDetails(id: 550)

    /// A valid movie details body for movie `id` of exactly `bytes` bytes (at least 100): a
    /// cast long enough, each member different, so that it compresses as amodb's JSON does.
    package static func largeMovieDetails(id: Int, bytes: Int) -> [UInt8] {
        var text = "{\"id\":\(id),\"title\":\"Fight Club\",\"credits\":{\"cast\":["
        // The last member's name takes what is left, to the exact size.
        let tail = (head: "{\"name\":\"", end: "\"}]},\"status\":\"Released\"}")
        let tailBytes = tail.head.utf8.count + tail.end.utf8.count
        var member = 0
        while true {
            let next =
                "{\"id\":\(member * 7919 % 100_003),\"name\":\"Person \(member * 31 % 977)\",\"order\":\(member)},"
            guard text.utf8.count + next.utf8.count + tailBytes <= bytes else { break }
            text += next
            member += 1
        }
        let padding = max(0, bytes - text.utf8.count - tailBytes)
        return Array((text + tail.head + String(repeating: "x", count: padding) + tail.end).utf8)
    }

    /// A small but valid movie details body for movie `id`.
    package static func movieDetails(id: Int) -> String {
        """
        {"id":\(id),"title":"Fight Club","original_title":"Fight Club","overview":"","runtime":139,"genres":[{"id":18,"name":"Drama"}],"budget":63000000,"revenue":100853753,"vote_average":8.4,"vote_count":30000,"popularity":60.1,"original_language":"en","status":"Released"}
        """
    }
}
