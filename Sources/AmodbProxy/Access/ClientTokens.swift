import Foundation
import Synchronization

/// The tokens an app's users present as `Authorization: Bearer <token>`. Several can be
/// valid at once (rotation): those from `AMODB_PROXY_TOKENS` plus the lines of
/// `AMODB_PROXY_TOKENS_FILE`, which is read again when it changes. Tokens are compared
/// in constant time, never logged and never forwarded.
public final class ClientTokens: Sendable {
    private struct State {
        var fileTokens: [Secret] = []
        var fileStamp: String?
    }

    private let fixed: [Secret]
    private let file: String?
    private let state = Mutex(State())
    private let logger: ProxyLogger

    /// Tokens from the setting and (optionally) a file of one token per line (`#` comments).
    public init(tokens: [Secret], file: String?, logger: ProxyLogger) {
        self.fixed = tokens.filter { !$0.isEmpty }
        self.file = file
        self.logger = logger
        reloadIfChanged()
    }

    /// Whether any token is configured (else every client is let in).
    public var isEnabled: Bool {
        !fixed.isEmpty || file != nil
    }

    /// How many tokens are valid now.
    public var count: Int {
        fixed.count + state.withLock { $0.fileTokens.count }
    }

    /// The client's identity for rate limiting (`token:<n>`, never the token), or `nil`
    /// when the field is missing or holds no valid token. Every configured token is
    /// compared, whatever matched, so the time taken does not say which one nearly did.
    func authenticate(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let prefix = "bearer "
        guard authorization.utf8.count > prefix.utf8.count,
              authorization.prefix(prefix.count).lowercased() == prefix
        else { return nil }
        let presented = Array(authorization.dropFirst(prefix.count).trimmingSpaces().utf8)
        let candidates = fixed + state.withLock { $0.fileTokens }
        var match: Int?
        for (index, token) in candidates.enumerated() where Self.constantTimeEquals(presented, Array(token.revealed.utf8)) {
            match = match ?? index
        }
        return match.map { "token:\($0)" }
    }

    /// Equal length and bytes, in time that depends only on the lengths.
    static func constantTimeEquals(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(presented.count == expected.count ? 0 : 1)
        for index in expected.indices {
            difference |= (index < presented.count ? presented[index] : 0) ^ expected[index]
        }
        return difference == 0
    }

    /// Reads the tokens file again if its size or modification time changed.
    public func reloadIfChanged() {
        guard let file else { return }
        let attributes = try? FileManager.default.attributesOfItem(atPath: file)
        let stamp = attributes.map { "\(($0[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)-\(($0[.size] as? Int) ?? 0)" }
        guard stamp != state.withLock({ $0.fileStamp }) else { return }
        guard let data = FileManager.default.contents(atPath: file) else {
            logger.error("cannot read AMODB_PROXY_TOKENS_FILE; keeping the tokens read before", ["path": file])
            return
        }
        let tokens = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingSpacesAndNewlines() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { Secret(String($0)) }
        let previous = state.withLock { state -> Int in
            defer { state = State(fileTokens: tokens, fileStamp: stamp) }
            return state.fileTokens.count
        }
        if stamp != nil { logger.info("client tokens loaded", ["path": file, "tokens": String(tokens.count), "previously": String(previous)]) }
    }
}
