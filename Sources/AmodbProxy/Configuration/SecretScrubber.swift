import Synchronization

/// The secrets a logger's lines are scrubbed of, shared by the logger's copies: those the
/// logger was made with (the amodb key), and the client tokens in force, which
/// `AppTokens` hands over again whenever it reads its file, so a token is scrubbed
/// however it arrived, a token added to the file later included.
///
/// Text shorter than the shortest secret cannot hold one: it is passed on after one atomic
/// load, without the lock. Most text scrubbed is an access-log line's method (`GET`; a
/// routed request's line has no path), so the hit path pays no more for tokens read from a
/// file than it did for none.
final class SecretScrubber: Sendable {
    private let fixed: [Secret]
    /// `fixed` and the tokens in force, without repeats.
    private let secrets: Mutex<[Secret]>
    /// Bytes in the shortest secret (`Int.max`: none).
    private let shortest: Atomic<Int>

    /// Scrubs `secrets` (empty ones are ignored) until tokens are added.
    init(secrets: [Secret]) {
        let fixed = Self.distinct(secrets)
        self.fixed = fixed
        self.secrets = Mutex(fixed)
        shortest = Atomic(Self.shortest(of: fixed))
    }

    /// Scrubs `tokens` from now on, in place of the tokens given before.
    func setTokens(_ tokens: [Secret]) {
        let all = Self.distinct(fixed + tokens)
        let length = Self.shortest(of: all)
        secrets.withLock { secrets in
            // Lowered before the new secrets are in, raised after: text is never passed on
            // unread for being shorter than a secret it is already checked against.
            shortest.store(min(length, shortest.load(ordering: .relaxed)), ordering: .relaxed)
            secrets = all
            shortest.store(length, ordering: .relaxed)
        }
    }

    /// `text` with every secret replaced by `<redacted>`.
    func scrubbed(_ text: String) -> String {
        guard text.utf8.count >= shortest.load(ordering: .relaxed) else { return text }
        var text = text
        for secret in secrets.withLock({ $0 }) where ByteSearch.contains(text.utf8, secret.revealed.utf8) {
            text = text.replacingOccurrences(of: secret.revealed, with: "<redacted>")
        }
        return text
    }

    private static func distinct(_ secrets: [Secret]) -> [Secret] {
        var seen = Set<String>()
        return secrets.filter { !$0.isEmpty && seen.insert($0.revealed).inserted }
    }

    private static func shortest(of secrets: [Secret]) -> Int {
        secrets.map(\.revealed.utf8.count).min() ?? Int.max
    }
}
