/// Steele, Lea and Flood's SplitMix64: a tiny generator whose sequence is fixed by its
/// seed on every platform and Swift version (the standard library's `random(in:using:)`
/// promises no particular sequence), for test data that must come out the same every run.
// Tests/Fuzz/run.sh compiles this file into the fuzzers on its own: it imports nothing.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is `seed`'s.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A uniform number in [0, 1), from the top 53 bits.
    package mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }
}
