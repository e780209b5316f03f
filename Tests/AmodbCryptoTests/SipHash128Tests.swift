import AmodbCrypto
import Testing

/// SipHash-2-4-128 against the reference implementation's vectors (`vectors_sip128`: key
/// 00 01 … 0f, message 00 01 … of each length), and a redacted key.
@Suite struct SipHash128Tests {
    static let key: [UInt8] = Array(0...15)

    /// Message length and the reference digest, as hex.
    @Test(arguments: [
        (0, "a3817f04ba25a8e66df67214c7550293"),
        (1, "da87c1d86b99af44347659119b22fc45"),
        (7, "a1f1ebbed8dbc153c0b84aa61ff08239"),
        (8, "3b62a9ba6258f5610f83e264f31497b4"),
        (15, "5493e99933b0a8117e08ec0f97cfc3d9"),
        (16, "6ee2a4ca67b054bbfd3315bf85230577"),
        (63, "5150d1772f50834a503e069a973fbd7c"),
    ])
    func matchesTheReferenceVectors(length: Int, expected: String) {
        let message = (0..<length).map { UInt8($0) }
        let digest = SipHash128(key: Self.key).digest(message)
        #expect(digest.bytes.map { String($0, radix: 16).leftPadded() }.joined() == expected)
        #expect(message.withUnsafeBytes { SipHash128(key: Self.key).digest($0) } == digest)
    }

    @Test func randomKeysGiveDifferentDigestsAndShowNothing() {
        let message = Array("a token".utf8)
        let one = SipHash128()
        #expect(one.digest(message) == one.digest(message))
        #expect(one.digest(message) != SipHash128().digest(message))
        #expect(one.description == "SipHash128(<redacted>)" && String(reflecting: one) == "SipHash128(<redacted>)")
    }
}

extension String {
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
