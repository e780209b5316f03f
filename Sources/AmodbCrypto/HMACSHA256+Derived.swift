extension HMACSHA256 {
    /// An HMAC keyed for one `purpose` from `key`: the code of `purpose` under `key` is its
    /// key, so a key derived for one use serves no other, and `key` itself is never the MAC's.
    public init(derivedFrom key: some Sequence<UInt8>, purpose: String) {
        self.init(key: HMACSHA256(key: key).authenticationCode(for: Array(purpose.utf8)))
    }

    /// The first `count` bytes (at most `byteCount`) of `message`'s code, as lower-case hex digits.
    public func hexCode(for message: some Sequence<UInt8>, bytes count: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * count)
        for byte in authenticationCode(for: message).prefix(max(0, count)) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
