/// Comparing secrets with libcrypto's `CRYPTO_memcmp`, whose time depends only on the
/// number of bytes compared, never on where two byte strings first differ (the compiler
/// may turn a plain loop that stops at the first difference back into one).
public enum ConstantTime {
    /// Whether `presented` holds exactly `expected`'s bytes, in time that depends on the
    /// lengths only: a `presented` of another length is refused after comparing `expected`
    /// with itself, as long as a real comparison takes.
    public static func equals(_ presented: some Collection<UInt8>, _ expected: some Collection<UInt8>) -> Bool {
        let contiguous = presented.withContiguousStorageIfAvailable { presented in
            expected.withContiguousStorageIfAvailable { expected in equals(presented, expected) }
        }
        if let contiguous, let result = contiguous { return result }
        return Array(presented).withUnsafeBufferPointer { presented in
            Array(expected).withUnsafeBufferPointer { expected in equals(presented, expected) }
        }
    }

    /// The same, for bytes read in place.
    public static func equals(_ presented: Span<UInt8>, _ expected: [UInt8]) -> Bool {
        presented.withUnsafeBufferPointer { presented in
            expected.withUnsafeBufferPointer { expected in equals(presented, expected) }
        }
    }

    private static func equals(_ presented: UnsafeBufferPointer<UInt8>, _ expected: UnsafeBufferPointer<UInt8>) -> Bool
    {
        guard let expectedBase = expected.baseAddress, !expected.isEmpty else { return presented.isEmpty }
        let sameLength = presented.count == expected.count
        let compared = sameLength ? presented.baseAddress ?? expectedBase : expectedBase
        return libcrypto.CRYPTO_memcmp(compared, expectedBase, expected.count) == 0 && sameLength
    }
}
