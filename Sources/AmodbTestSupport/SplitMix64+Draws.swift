extension SplitMix64 {
    /// A number in `0..<count` (`count` above 0). The remainder's bias is below 2⁻⁴⁰ for the
    /// small counts tests draw from, and the result is fixed by the seed alone (the standard
    /// library's `random(in:using:)` promises no particular sequence).
    package mutating func below(_ count: Int) -> Int {
        precondition(count > 0, "nothing to draw from")
        return Int(next() % UInt64(count))
    }

    /// Shuffles `array` in place (Fisher–Yates), in an order fixed by the seed alone.
    package mutating func shuffle<Element>(_ array: inout [Element]) {
        guard array.count > 1 else { return }
        for index in stride(from: array.count - 1, to: 0, by: -1) {
            array.swapAt(index, below(index + 1))
        }
    }
}
