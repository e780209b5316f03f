import AmodbCrypto
import Foundation
import Synchronization

/// The tokens an app's users present as `Authorization: Bearer <token>`. Several can be
/// valid at once (rotation): those from `AMODB_PROXY_TOKENS` plus the lines of
/// `AMODB_PROXY_TOKENS_FILE`, which is read again when it changes. Tokens are compared
/// in constant time and never forwarded; every token in force, however it arrived, is
/// handed to the logger's scrubber, so none is ever logged.
package final class AppTokens: Sendable {
    /// A valid token: the bytes a client must present, and the name the limits know it by.
    private struct Entry: Sendable {
        let bytes: [UInt8]
        let identity: String

        init(_ token: Secret, identifier: TokenIdentifier) {
            bytes = Array(token.revealed.utf8)
            identity = identifier.identity(of: token)
        }
    }

    private struct State {
        /// The setting's tokens, then the file's.
        var entries: [Entry]
        var fileStamp: String?
    }

    private let fixed: [Secret]
    private let fixedEntries: [Entry]
    private let file: String?
    private let identifier: TokenIdentifier
    private let state: Mutex<State>
    private let logger: ProxyLogger

    /// Tokens from the setting and (optionally) a file of one token per line (`#` comments),
    /// named for the limits under a key derived from `amodbKey` (`TokenIdentifier`).
    package init(tokens: [Secret], file: String?, amodbKey: Secret, logger: ProxyLogger) {
        let fixed = tokens.filter { !$0.isEmpty }
        let identifier = TokenIdentifier(amodbKey: amodbKey)
        let fixedEntries = fixed.map { Entry($0, identifier: identifier) }
        self.fixed = fixed
        self.fixedEntries = fixedEntries
        self.file = file
        self.identifier = identifier
        self.state = Mutex(State(entries: fixedEntries))
        self.logger = logger
        logger.scrubTokens(fixed)
        reloadIfChanged()
    }

    /// Whether any token is configured (else every client is let in).
    package var isEnabled: Bool {
        !fixed.isEmpty || file != nil
    }

    /// How many tokens are valid now.
    package var count: Int {
        state.withLock { $0.entries.count }
    }

    /// The client's token's identity for the limits (`TokenIdentifier`: never the token,
    /// nor its place in the list), or `nil` when the field is missing or holds no valid
    /// token. Every token in force is compared, whatever matched, so the time taken does
    /// not say which one nearly did.
    func authenticate(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let prefix = "bearer "
        guard authorization.utf8.count > prefix.utf8.count,
            authorization.prefix(prefix.count).lowercased() == prefix
        else { return nil }
        let presented = Array(authorization.dropFirst(prefix.count).trimmingSpaces().utf8)
        return authenticate(token: presented.span)
    }

    /// The identity of the token `presented` (the bytes after `Bearer `, or an `api_key`
    /// value), or `nil` when it is no valid token; compared as `authenticate(_:)` compares.
    func authenticate(token presented: Span<UInt8>) -> String? {
        var match: String?
        for entry in state.withLock({ $0.entries }) where ConstantTime.equals(presented, entry.bytes) {
            match = match ?? entry.identity
        }
        return match
    }

    /// Reads the tokens file again if its size or modification time changed.
    package func reloadIfChanged() {
        guard let file else { return }
        let attributes = try? FileManager.default.attributesOfItem(atPath: file)
        let stamp = attributes.map {
            "\(($0[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)-\(($0[.size] as? Int) ?? 0)"
        }
        guard stamp != state.withLock({ $0.fileStamp }) else { return }
        guard let data = FileManager.default.contents(atPath: file) else {
            logger.error("cannot read AMODB_PROXY_TOKENS_FILE; keeping the tokens read before", ["path": file])
            return
        }
        let tokens = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingSpacesAndNewlines() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { Secret(String($0)) }
        let entries = fixedEntries + tokens.map { Entry($0, identifier: identifier) }
        let previous = state.withLock { state -> Int in
            defer { state = State(entries: entries, fileStamp: stamp) }
            // Under the lock: of two reloads at once (the timer, SIGHUP), the scrubber keeps
            // the tokens of the one whose tokens stay in force.
            logger.scrubTokens(fixed + tokens)
            return state.entries.count - fixedEntries.count
        }
        if stamp != nil {
            logger.info(
                "client tokens loaded", ["path": file, "tokens": String(tokens.count), "previously": String(previous)])
        }
    }
}
