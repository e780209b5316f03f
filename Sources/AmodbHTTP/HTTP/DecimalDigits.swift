/// Decimal digits of integers, written straight into bytes: no `String` per number.
@usableFromInline
package enum DecimalDigits {
    /// Appends `value`'s decimal digits (with a `-` when negative).
    package static func append(_ value: Int, to output: inout [UInt8]) {
        withDigits(of: value) { output.append(contentsOf: $0) }
    }

    /// Calls `body` with `value`'s decimal digits (with a `-` when negative), written into
    /// a buffer on the stack.
    @inlinable
    package static func withDigits<R>(of value: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var magnitude = value.magnitude
        // A sign and 20 digits hold any Int; filled from the right.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { digits in
            var start = 21
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            return body(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
