import AmodbCrypto
import Testing

@testable import AmodbClient

/// The client's own SHA-256, for App Attest's client data hash, against FIPS 180-4's
/// examples and against libcrypto (AmodbCrypto) at every length around a block's edges.
@Suite("SHA-256 in the client")
struct SHA256DigestTests {
    @Test(
        "Known digests",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ])
    func knownDigests(message: String, hex: String) {
        #expect(Self.hex(SHA256Digest.hash(message.utf8)) == hex)
    }

    @Test func aMillionAs() {
        let digest = SHA256Digest.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000))
        #expect(Self.hex(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func everyLengthUpToThreeBlocksMatchesLibcrypto() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...192 {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(SHA256Digest.hash(message) == SHA256.hash(message), "length \(length)")
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
