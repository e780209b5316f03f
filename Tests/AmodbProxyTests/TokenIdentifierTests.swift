import Testing

@testable import AmodbProxy

/// A client token's name in the limits' keys: a keyed hash of the token, the same in every
/// process with the same amodb key, and of no use without it.
struct TokenIdentifierTests {
    /// Tokens as an operator makes them (`openssl rand -hex 32`) and as apps have shipped them.
    static let tokens = [
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "app-token-1", "app-token-2", "token:app",
    ]

    @Test func isTheSameInEveryProcessWithTheSameKey() {
        // Computed apart from this process, with Python's hmac: the name depends on the key
        // and the token alone (no per-process seed), so every replica of a fleet agrees.
        //   derived = hmac.new(key, b"amodb-proxy client token identity v1", sha256).digest()
        //   "token:" + hmac.new(derived, token, sha256).digest()[:8].hex()
        let identifier = TokenIdentifier(amodbKey: Secret("test-secret-key-0123456789"))
        #expect(identifier.identity(of: Secret("app-token-1")) == "token:86d62c89c41763c6")
        #expect(identifier.identity(of: Secret("app-token-2")) == "token:5603b0d695eae730")
        #expect(
            TokenIdentifier(amodbKey: Secret("another-amodb-key")).identity(of: Secret("app-token-1"))
                == "token:c755aa81ca9fcc3b")
        let again = TokenIdentifier(amodbKey: Secret("test-secret-key-0123456789"))
        for token in Self.tokens {
            #expect(again.identity(of: Secret(token)) == identifier.identity(of: Secret(token)))
        }
    }

    @Test func differsFromTokenToTokenAndFromKeyToKey() {
        let identifier = TokenIdentifier(amodbKey: Secret("test-secret-key-0123456789"))
        let names = Self.tokens.map { identifier.identity(of: Secret($0)) }
        #expect(Set(names).count == Self.tokens.count)
        let otherKey = TokenIdentifier(amodbKey: Secret("another-amodb-key"))
        for token in Self.tokens {
            #expect(otherKey.identity(of: Secret(token)) != identifier.identity(of: Secret(token)))
        }
    }

    @Test(arguments: tokens)
    func neverContainsTheToken(_ token: String) {
        let name = TokenIdentifier(amodbKey: Secret("test-secret-key-0123456789")).identity(of: Secret(token))
        #expect(!name.contains(token))
        #expect(!name.contains(String(token.prefix(8))), "nor a part of it")
        #expect(name.hasPrefix("token:") && name.utf8.count == 22)
        #expect(name.dropFirst(6).allSatisfy { $0.isHexDigit && !$0.isUppercase })
    }
}
