import AmodbModels
import AmodbProxy
import AmodbTestSupport
import Dispatch
import Foundation
import Testing

private let movie550 = try! AmodbRequest(route: .movie(id: 550))
private let mebibyte = 1024 * 1024

private func fetcher(_ upstream: MisbehavingUpstream, timeout: Double = 10, maxBytes: Int = mebibyte)
    -> URLSessionUpstreamFetcher
{
    URLSessionUpstreamFetcher(
        baseURL: upstream.baseURL, key: Secret(ProxyHarness.key), timeout: timeout, maxBytes: maxBytes)
}

/// Why the call failed, or `nil` if it did not.
private func error(of outcome: Result<UpstreamResponse, UpstreamError>) -> UpstreamError? {
    if case .failure(let error) = outcome { return error }
    return nil
}

/// The real fetcher against an upstream that misbehaves on the wire.
@Suite(.timeLimit(.minutes(1)))
struct UpstreamFetcherMisbehaviourTests {
    @Test func asksAmodbForGzipOnly() async throws {
        try await withServer(try MisbehavingUpstream(.respond(body: Array(ScriptedUpstream.movieDetails.utf8)))) {
            (upstream: MisbehavingUpstream) async throws in
            _ = await fetcher(upstream).fetch(movie550)
            let fields = upstream.requests.first?.lowercased().split(separator: "\r\n").filter {
                $0.hasPrefix("accept-encoding:")
            }
            #expect(fields == ["accept-encoding: gzip"])
        }
    }

    @Test func inflatesAGzipAnswerWithinTheCap() async throws {
        let body = Array(ScriptedUpstream.movieDetails.utf8)
        let upstream = try MisbehavingUpstream(
            .respond(headers: [("Content-Encoding", "gzip")], body: Gzip.stored(body)))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            let outcome = await fetcher(upstream).fetch(movie550)
            #expect(try outcome.get().body == body)
        }
    }

    @Test func cutsOffAGzipBombOnceItsInflatedSizePassesTheCap() async throws {
        let bomb = Gzip.zeros(4 * mebibyte)
        #expect(bomb.count < 32 * 1024, "a small gzip")
        try await withServer(try MisbehavingUpstream(.respond(headers: [("Content-Encoding", "gzip")], body: bomb))) {
            (upstream: MisbehavingUpstream) async throws in
            let outcome = await fetcher(upstream, maxBytes: mebibyte).fetch(movie550)
            #expect(error(of: outcome) == .tooLarge)
        }
    }

    @Test(arguments: [(mebibyte, true), (mebibyte + 1, false)])
    func acceptsABodyUpToTheCapAndNotOneByteMore(_ length: Int, _ accepted: Bool) async throws {
        try await withServer(try MisbehavingUpstream(.stream(length: length))) {
            (upstream: MisbehavingUpstream) async throws in
            let outcome = await fetcher(upstream, maxBytes: mebibyte).fetch(movie550)
            if accepted {
                #expect(try outcome.get().body.count == length)
            } else {
                #expect(error(of: outcome) == .tooLarge)
            }
        }
    }

    @Test func cancelsAnEndlessBodyAsItArrives() async throws {
        let length = 1024 * mebibyte
        try await withServer(try MisbehavingUpstream(.stream(length: length))) {
            (upstream: MisbehavingUpstream) async throws in
            let outcome = await fetcher(upstream, maxBytes: mebibyte).fetch(movie550)
            #expect(error(of: outcome) == .tooLarge)
            #expect(await eventually { upstream.abandoned == 1 }, "the transfer was cancelled, not read to its end")
            #expect(upstream.bytesSent < length)
        }
    }

    @Test func givesUpOnABodyDrippedByteByByteAtTheDeadline() async throws {
        // 190 bytes at one every 0.25 s would take 47 s; each byte resets an idle timer. The bound
        // on the elapsed time sits far from both the deadline and the drip, so load cannot cross it.
        let upstream = try MisbehavingUpstream(
            .drip(prefix: Array(#"{"id":550,"#.utf8), interval: 0.25, declaredLength: 200))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            let start = DispatchTime.now()
            let outcome = await fetcher(upstream, timeout: 1.5).fetch(movie550)
            let elapsed = seconds(since: start)
            #expect(error(of: outcome) == .timedOut)
            #expect(elapsed >= 1.4 && elapsed < 20, "\(elapsed) s")
        }
    }
}

extension UpstreamFetcherMisbehaviourTests {
    @Test func aCancelledCallerIsAnsweredAtOnceNotAtTheDeadline() async throws {
        let upstream = try MisbehavingUpstream(
            .drip(prefix: Array(#"{"id":550,"#.utf8), interval: 0.25, declaredLength: 50))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            let fetcher = fetcher(upstream, timeout: 30)
            let call = Task { await fetcher.fetch(movie550) }
            #expect(await eventually { upstream.bytesSent > 10 })
            let start = DispatchTime.now()
            call.cancel()
            let outcome = await call.value
            #expect(error(of: outcome) == .unreachable)
            #expect(seconds(since: start) < 15)  // not the 30 s deadline
        }
    }
}
