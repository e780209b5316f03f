import AmodbModels

/// How a fetch failed, as stored in Redis for the replicas that waited on it:
/// `<prefix>outcome:<key>`, one line of text,
/// `v1 <finished-at ms> <status> <fwd-status|-> <retry-after ms|-> <back-off ms> <detail|-> <key length> <key><message>`.
/// The time comes first so the lease script can read it (`RedisFetchLeases.claimScript`):
/// a request that arrived before it was written is answered with it instead of calling again.
///
/// Reading trusts nothing: another version, another key, a status the proxy would not
/// answer, a number out of range or a message that is not short printable ASCII is refused.
enum FailureEnvelope {
    /// The longest message kept; the proxy's own are far shorter.
    static let longestMessage = 256
    /// The longest `Retry-After` or back-off read, in milliseconds (a day).
    static let longestWait: Int64 = 86_400_000

    /// The value stored for `failure` of the fetch of `key`, finished at `finishedAt` (ms).
    static func encode(_ failure: FetchFailure, key: String, finishedAt: Int64) -> [UInt8] {
        func milliseconds(_ seconds: Double) -> Int64 {
            (seconds * 1000).checkedInt(.up, clampedTo: 0...Int(longestWait)).map(Int64.init) ?? longestWait
        }
        let fields = [
            "v1", String(finishedAt), String(failure.status), failure.fwdStatus.map(String.init) ?? "-",
            failure.retryAfter.map { String(milliseconds($0)) } ?? "-", String(milliseconds(failure.backoff)),
            failure.detail.map(name) ?? "-", String(key.utf8.count),
        ]
        return Array((fields.joined(separator: " ") + " " + key + String(failure.message.prefix(longestMessage))).utf8)
    }

    /// The failure in `bytes` if it was stored for `key`, else `nil`.
    static func decode(_ bytes: [UInt8], key: String) -> FetchFailure? {
        var rest = bytes[...]
        func field() -> String? {
            guard let space = rest.firstIndex(of: 0x20) else { return nil }
            defer { rest = rest[(space + 1)...] }
            return String(decoding: rest[..<space], as: UTF8.self)
        }
        func number(_ text: String?, in range: ClosedRange<Int64>) -> Int64? {
            text.flatMap { Int64($0) }.flatMap { range.contains($0) ? $0 : nil }
        }
        guard field() == "v1", number(field(), in: 0...Int64.max) != nil,
            let status = number(field(), in: 500...599),
            let fwdText = field(), let retryText = field(),
            let backoff = number(field(), in: 0...longestWait),
            let detailText = field(),
            let keyLength = number(field(), in: 0...Int64(rest.count))
        else { return nil }
        let fwdStatus = fwdText == "-" ? nil : number(fwdText, in: 100...599)
        let retryAfter = retryText == "-" ? nil : number(retryText, in: 0...longestWait)
        let detail = detailText == "-" ? nil : details.first { name($0) == detailText }
        guard (fwdText == "-") == (fwdStatus == nil), (retryText == "-") == (retryAfter == nil),
            (detailText == "-") == (detail == nil)
        else { return nil }
        guard rest.prefix(Int(keyLength)).elementsEqual(key.utf8) else { return nil }
        let message = rest.dropFirst(Int(keyLength))
        guard !message.isEmpty, message.count <= longestMessage, message.allSatisfy({ (0x20...0x7E).contains($0) })
        else { return nil }
        return FetchFailure(
            status: Int(status), message: String(decoding: message, as: UTF8.self), fwdStatus: fwdStatus.map(Int.init),
            retryAfter: retryAfter.map { Double($0) / 1000 }, detail: detail, backoff: Double(backoff) / 1000)
    }

    private static let details = CacheOutcome.MissDetail.all

    private static func name(_ detail: CacheOutcome.MissDetail) -> String {
        detail.name
    }
}
