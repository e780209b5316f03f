import AmodbCrypto
import Testing

/// The test vectors of RFC 4231 §4 for HMAC-SHA-256, and the key kept out of descriptions.
struct HMACSHA256Tests {
    /// One case of RFC 4231 §4: key, data, and the code (case 5's truncated to 128 bits).
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let data: [UInt8]
        let code: String

        var testDescription: String { name }
    }

    static let vectors = [
        Vector(
            name: "4.2 test case 1", key: Array(repeating: 0x0B, count: 20), data: Array("Hi There".utf8),
            code: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(
            name: "4.3 test case 2: a key shorter than the code", key: Array("Jefe".utf8),
            data: Array("what do ya want for nothing?".utf8),
            code: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(
            name: "4.4 test case 3", key: Array(repeating: 0xAA, count: 20), data: Array(repeating: 0xDD, count: 50),
            code: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(
            name: "4.5 test case 4", key: Array(1...25), data: Array(repeating: 0xCD, count: 50),
            code: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(
            name: "4.6 test case 5: truncated to 128 bits", key: Array(repeating: 0x0C, count: 20),
            data: Array("Test With Truncation".utf8),
            code: "a3b6167473100ee06e0c796c2955552b"),
        Vector(
            name: "4.7 test case 6: a key larger than a block", key: Array(repeating: 0xAA, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            code: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(
            name: "4.8 test case 7: key and data larger than a block", key: Array(repeating: 0xAA, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
                    + "be hashed before being used by the HMAC algorithm.").utf8),
            code: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: vectors)
    func matchesRFC4231(_ vector: Vector) {
        let code = HMACSHA256(key: vector.key).authenticationCode(for: vector.data)
        #expect(code.count == HMACSHA256.byteCount)
        #expect(hex(code).hasPrefix(vector.code))
        #expect(HMACSHA256(key: vector.key).isAuthenticationCode(code, of: vector.data))
    }

    @Test func takesAnEmptyKeyAndAnEmptyMessage() {
        // Python's hmac.new(b"", b"", hashlib.sha256).hexdigest().
        #expect(
            hex(HMACSHA256(key: []).authenticationCode(for: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func refusesACodeOfAnotherMessageOrKey() {
        let mac = HMACSHA256(key: Array("Jefe".utf8))
        let code = mac.authenticationCode(for: Array("what do ya want for nothing?".utf8))
        #expect(!mac.isAuthenticationCode(code, of: Array("what do ya want for nothing!".utf8)))
        #expect(
            !HMACSHA256(key: Array("Jeff".utf8)).isAuthenticationCode(
                code, of: Array("what do ya want for nothing?".utf8)))
        #expect(
            !mac.isAuthenticationCode(code.prefix(16), of: Array("what do ya want for nothing?".utf8)),
            "a truncated code")
    }

    @Test func neverShowsItsKey() {
        let mac = HMACSHA256(key: Array("the-amodb-key".utf8))
        var dumped = ""
        dump(mac, to: &dumped)
        for text in ["\(mac)", String(describing: mac), String(reflecting: mac), dumped] {
            #expect(!text.contains("the-amodb-key"))
            #expect(!text.contains("116, 104, 101"), "nor the key's bytes")
        }
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
