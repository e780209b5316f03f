/// Decimal digits of integers appended to bytes, with no `String` per number: written by
/// `ByteWriter.write(decimal:)`, as every number the server and its logs write.
public enum DecimalDigits {
    /// Appends `value`'s decimal digits (with a `-` when negative).
    @inlinable
    public static func append(_ value: Int, to output: inout [UInt8]) {
        ByteWriter.append(to: &output, atMost: ByteWriter.maxNumberBytes) { $0.write(decimal: value) }
    }
}
