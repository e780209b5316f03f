extension Array where Element == UInt8 {
    /// Whether the bytes end with `suffix` (a request head's blank line, for the test servers).
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
