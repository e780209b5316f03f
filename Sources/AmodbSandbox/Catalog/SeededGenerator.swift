/// SplitMix64: a tiny, fast generator whose sequence depends only on its seed, so the
/// generated catalog is the same on every machine and every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An element of a non-empty array.
    mutating func pick<T>(_ elements: [T]) -> T {
        elements[Int.random(in: 0..<elements.count, using: &self)]
    }

    /// A value rounded to `places` decimals, as amodb's scores and popularity are.
    mutating func decimal(in range: ClosedRange<Double>, places: Int) -> Double {
        let scale = (0..<places).reduce(1.0) { value, _ in value * 10 }
        return (Double.random(in: range, using: &self) * scale).rounded() / scale
    }

    /// An image path like amodb's: `/` + 27 base-62 characters + `.jpg`.
    mutating func imagePath() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        return "/" + String((0..<27).map { _ in pick(alphabet) }) + ".jpg"
    }
}
