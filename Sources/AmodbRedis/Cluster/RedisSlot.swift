/// Redis Cluster's hash slots: a key belongs to slot `CRC16(key) mod 16384`, where only the
/// key's hash tag is hashed when it has one (the text between its first `{` and the first
/// `}` after it, when that text is not empty), so keys that share a tag share a slot.
public enum RedisSlot {
    /// Slots in a cluster.
    public static let count = 16_384

    /// The slot `key` belongs to, as the cluster computes it (`CLUSTER KEYSLOT`).
    public static func of(_ key: String) -> Int {
        let bytes = Array(key.utf8)
        var hashed = bytes[...]
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
            let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            hashed = bytes[(open + 1)..<close]
        }
        return Int(crc16(hashed)) & (count - 1)
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial value 0), the checksum the cluster hashes with.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
