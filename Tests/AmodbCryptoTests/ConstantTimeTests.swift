import AmodbCrypto
import Testing

struct ConstantTimeTests {
    @Test(arguments: [
        ("s3cret-token", true, "the same bytes"), ("x3cret-token", false, "differs in the first byte"),
        ("s3cret-tokex", false, "differs in the last byte"), ("s3cret-tok", false, "a prefix"),
        ("s3cret-token-and-more", false, "longer"), ("", false, "empty"),
    ])
    func comparesExactly(_ presented: String, _ equal: Bool, _ why: String) {
        #expect(ConstantTime.equals(Array(presented.utf8), Array("s3cret-token".utf8)) == equal, "\(why)")
        #expect(ConstantTime.equals(presented.utf8, "s3cret-token".utf8) == equal, "\(why), as a string's bytes")
    }

    @Test func comparesBytesWithoutContiguousStorage() {
        #expect(ConstantTime.equals(Array("abc".utf8).reversed(), Array("cba".utf8)))
        #expect(!ConstantTime.equals(Array("abc".utf8).reversed(), Array("abc".utf8)))
    }

    @Test func anEmptySecretEqualsOnlyNothing() {
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(!ConstantTime.equals([UInt8(1)], [UInt8]()))
    }
}
