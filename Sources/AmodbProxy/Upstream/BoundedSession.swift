import Dispatch
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A URLSession for the proxy's own outgoing GETs (amodb, an identity provider's key set),
/// with two limits that protect the proxy from what comes back, and no redirects followed:
/// - `timeout` is a deadline for the whole call, not a pause between bytes: a server
///   that sends its headers and then drips a byte every few seconds is cut off at it;
/// - `maxBytes` caps the body as it arrives, counted after decoding (URLSession inflates
///   gzip), so neither a huge body nor a small gzip that inflates to gigabytes is ever
///   held whole.
/// No local HTTP cache, no cookies; connections are reused across calls.
final class BoundedSession: Sendable {
    private let timeout: Double
    private let maxBytes: Int
    private let session: URLSession
    private let transfers: Transfers

    /// `timeout` (seconds) bounds each call from start to last byte; `maxBytes` its decoded body.
    init(timeout: Double, maxBytes: Int, maxConnections: Int = 16) {
        self.timeout = timeout
        self.maxBytes = maxBytes
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpMaximumConnectionsPerHost = maxConnections
        let transfers = Transfers()
        self.transfers = transfers
        self.session = URLSession(
            configuration: configuration, delegate: transfers, delegateQueue: InlineDelegateQueue())
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// A GET of `url` with this session's timeout and no cache, for the caller to add fields to.
    func request(for url: URL) -> URLRequest {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "GET"
        return request
    }

    /// Sends `request` and collects its answer within the deadline and the body cap.
    func get(_ request: URLRequest) async -> Result<UpstreamResponse, UpstreamError> {
        let task = session.dataTask(with: request)
        let transfers = self.transfers
        let (maxBytes, timeout) = (self.maxBytes, self.timeout)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfers.begin(task, maxBytes: maxBytes, deadline: timeout, continuation: continuation)
                task.resume()
                if Task.isCancelled { transfers.cancel(task) }
            }
        } onCancel: {
            transfers.cancel(task)
        }
    }
}

/// The session's delegate: collects each call's body within its cap, enforces its
/// deadline, refuses redirects, and resumes the caller once the call is over.
private final class Transfers: NSObject, URLSessionDataDelegate, Sendable {
    typealias Continuation = CheckedContinuation<Result<UpstreamResponse, UpstreamError>, Never>

    private struct Transfer {
        let continuation: Continuation
        let maxBytes: Int
        let deadline: Deadline
        var body: [UInt8] = []
    }

    /// A call's pending deadline. `DispatchWorkItem` is thread-safe (cancelling it from
    /// any thread is what it is for); the overlay just does not mark it `Sendable`.
    private struct Deadline: @unchecked Sendable {
        let item: DispatchWorkItem
    }

    /// Where deadlines fire: never blocked, so a deadline is not held up by anything else.
    private let deadlines = DispatchQueue(label: "amodb-proxy.upstream-deadlines", qos: .userInitiated)
    /// Where tasks are cancelled: this toolchain's `URLSessionTask.cancel()` waits on
    /// URLSession's shared work queue, which must not hold up a deadline or a global thread.
    private let cancels = DispatchQueue(label: "amodb-proxy.upstream-cancels", qos: .userInitiated)

    /// Calls in progress, by task identifier. Delegate callbacks come on the session's
    /// serial queue; the deadline and `begin` come from elsewhere, hence the lock.
    private let transfers = Mutex<[Int: Transfer]>([:])

    /// Registers `task` before it is resumed and arms its deadline (seconds from now).
    func begin(_ task: URLSessionDataTask, maxBytes: Int, deadline seconds: Double, continuation: Continuation) {
        let deadline = Deadline(item: DispatchWorkItem { [weak self] in self?.cut(task, because: .timedOut) })
        transfers.withLock {
            $0[task.taskIdentifier] = Transfer(continuation: continuation, maxBytes: maxBytes, deadline: deadline)
        }
        deadlines.asyncAfter(deadline: .now() + seconds, execute: deadline.item)
    }

    /// Gives up on `task` because its caller was cancelled (a shutdown).
    func cancel(_ task: URLSessionTask) {
        cut(task, because: .unreachable)
    }

    /// Ends the call now with `reason` (its caller waits no longer for URLSession to wind
    /// it down), then cancels `task`; whatever URLSession still delivers is ignored.
    private func cut(_ task: URLSessionTask, because reason: UpstreamError) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.deadline.item.cancel()
        transfer.continuation.resume(returning: .failure(reason))
        // Not here: callbacks run on URLSession's work queue (`InlineDelegateQueue`), and
        // this toolchain's `cancel()` waits on that queue with `sync`.
        cancels.async { task.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflows = transfers.withLock { transfers -> Bool in
            guard let transfer = transfers[dataTask.taskIdentifier] else { return false }
            if transfer.body.count + data.count > transfer.maxBytes { return true }
            transfers[dataTask.taskIdentifier]?.body.append(contentsOf: data)
            return false
        }
        if overflows { cut(dataTask, because: .tooLarge) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.deadline.item.cancel()
        transfer.continuation.resume(returning: Self.outcome(transfer, response: task.response, error: error))
    }

    private static func outcome(_ transfer: Transfer, response: URLResponse?, error: (any Error)?) -> Result<
        UpstreamResponse, UpstreamError
    > {
        if let error { return .failure((error as? URLError)?.code == .timedOut ? .timedOut : .unreachable) }
        guard let http = response as? HTTPURLResponse else { return .failure(.unreachable) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return .success(UpstreamResponse(status: http.statusCode, headers: headers, body: transfer.body))
    }

    /// Refuses every redirect: the answer is what the server asked sent, and the fields
    /// sent with it (amodb's key) stay on that server's host.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// Runs each delegate callback at once, on the queue URLSession calls from, instead of
/// queueing it. FoundationNetworking hands every body chunk to the delegate with
/// `delegateQueue.addOperation` and lets libcurl read and inflate on without waiting:
/// with an ordinary queue the delegate fell behind by everything in flight, all of it
/// held in memory (a body far past the cap, or a gzip bomb's whole inflated output, before
/// the cap was even seen). Inline, the count keeps step with the
/// transfer and the cancel lands before libcurl's next read. The callbacks are short
/// and never block: a lock, an append, a continuation resumed.
private final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
}
