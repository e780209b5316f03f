// What both libFuzzer targets share: stopping with the input shown, and the plan for
// feeding an input in chunks. `run.sh` compiles this file into each fuzzer, with
// `Sources/AmodbTestSupport/SplitMix64.swift` for the generator (the tests' own).

/// Stops the fuzzer with a message; libFuzzer records the input as a crash. The file and
/// line are the caller's, so the message says which fuzzer and which check.
func fail(_ message: String, _ input: [UInt8], file: StaticString = #fileID, line: UInt = #line) -> Never {
    let shown = String(decoding: input.prefix(600), as: UTF8.self).debugDescription
    fatalError("\(message)\ninput (\(input.count) bytes): \(shown)", file: file, line: line)
}

/// Stops the fuzzer (see `fail`) unless `condition` holds.
func check(
    _ condition: Bool, _ message: @autoclosure () -> String, _ input: [UInt8], file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition { fail(message(), input, file: file, line: line) }
}

/// A generator seeded from the input's length and first four bytes: the same input is
/// always fed the same way, so a crash reproduces from its file alone.
func seededGenerator(for input: [UInt8]) -> SplitMix64 {
    var seed = UInt64(input.count)
    for byte in input.prefix(4) { seed = seed << 8 | UInt64(byte) }
    return SplitMix64(seed: seed)
}

/// Chunk sizes that add up to at least `count`, by `mode` (0 to 3): a byte at a time, like a
/// slowloris; up to 8 bytes; up to 97; or mostly large pieces with single bytes between.
func chunkSizes(count: Int, mode: UInt8, using random: inout SplitMix64) -> [Int] {
    var chunks: [Int] = []
    var total = 0
    while total < count {
        let size: Int
        switch mode & 3 {
        case 0: size = 1
        case 1: size = 1 + Int(random.next() % 8)
        case 2: size = 1 + Int(random.next() % 97)
        default: size = random.next() % 4 == 0 ? 1 : 1 + Int(random.next() % 1024)
        }
        chunks.append(size)
        total += size
    }
    return chunks
}
