extension X509Certificate {
    /// The largest PEM text read, in bytes: a bundle of a few roots.
    public static let maximumPEMBytes = 256 * 1024

    /// Every certificate in `pem`, in order: the blocks between `-----BEGIN CERTIFICATE-----`
    /// and `-----END CERTIFICATE-----` lines (RFC 7468 §5), each strict base64. Text outside
    /// the blocks is ignored, as RFC 7468 §2 allows; a block that does not close or decode,
    /// or text with no block at all, is refused.
    public static func certificates(pem: String) throws(CryptoError) -> [X509Certificate] {
        guard pem.utf8.count <= maximumPEMBytes else {
            throw CryptoError("PEM text longer than \(maximumPEMBytes) bytes")
        }
        var certificates: [X509Certificate] = []
        var body: [UInt8]?
        for line in pem.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = trimmed(line)
            if line == "-----BEGIN CERTIFICATE-----" {
                guard body == nil else { throw CryptoError("a PEM certificate begins inside another") }
                body = []
            } else if line == "-----END CERTIFICATE-----" {
                guard let base64 = body, let der = Self.decodeBase64(base64) else {
                    throw CryptoError("a PEM certificate that does not decode")
                }
                certificates.append(try X509Certificate(der: der))
                body = nil
            } else if body != nil {
                body?.append(contentsOf: line.utf8)
            }
        }
        guard body == nil else { throw CryptoError("a PEM certificate that does not end") }
        guard !certificates.isEmpty else { throw CryptoError("PEM text with no certificate") }
        return certificates
    }

    /// Standard base64 with padding (RFC 4648 §4), as PEM writes it, read through the
    /// strict base64url decoder: the two alphabets differ only in `+/` for `-_`.
    private static func decodeBase64(_ text: [UInt8]) -> [UInt8]? {
        var unpadded = text[...]
        for _ in 0..<2 where unpadded.last == UInt8(ascii: "=") { unpadded.removeLast() }
        guard unpadded.count == text.count || text.count % 4 == 0 else { return nil }
        let translated = unpadded.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "-"), UInt8(ascii: "_"): 0  // not in this alphabet: refused below
            default: byte
            }
        }
        return Base64URL.decode(translated)
    }

    /// `line` without leading or trailing spaces and tabs.
    private static func trimmed(_ line: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = line.firstIndex(where: { !isBlank($0) }), let end = line.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return line[start...end]
    }
}
