extension Double {
    /// This value as an `Int`, rounded by `rule` and clamped to `range`; `nil` when it is not
    /// finite. Numbers from outside (headers, snapshots) go through here instead of
    /// `Int(_:)`, which traps on `inf`, `nan` and anything beyond `Int`'s range.
    /// Always inlined: at a call site the rule is a constant and the rounding one
    /// instruction; called, the standard library's rounding switches over the (resilient)
    /// rule through its witnesses, ~100 instructions, twice on every cache hit.
    @inlinable @inline(__always)
    package func checkedInt(_ rule: FloatingPointRoundingRule, clampedTo range: ClosedRange<Int>) -> Int? {
        guard isFinite else { return nil }
        let rounded = self.rounded(rule)
        if rounded <= Double(range.lowerBound) { return range.lowerBound }
        if rounded >= Double(range.upperBound) { return range.upperBound }
        return Int(exactly: rounded) ?? range.upperBound
    }
}
