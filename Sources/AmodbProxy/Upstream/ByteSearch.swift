import CSystemShims

/// Finding one byte string in another with `memmem(3)`: how the key is kept out of
/// bodies and log lines without Foundation's locale-aware `String.contains`.
enum ByteSearch {
    /// Whether `needle`'s bytes occur in `haystack`'s.
    static func contains(_ haystack: some Collection<UInt8>, _ needle: some Collection<UInt8>) -> Bool {
        guard !needle.isEmpty else { return false }
        let found = haystack.withContiguousStorageIfAvailable { hay in
            needle.withContiguousStorageIfAvailable { pin in
                amodb_contains(hay.baseAddress, hay.count, pin.baseAddress, pin.count) != 0
            }
        }
        if let found, let result = found { return result }
        let hay = Array(haystack)
        let pin = Array(needle)
        return hay.withUnsafeBytes { h in
            pin.withUnsafeBytes { amodb_contains(h.baseAddress, h.count, $0.baseAddress, $0.count) != 0 }
        }
    }
}
