extension Double {
    /// This value as an `Int`, rounded by `rule` and clamped to `range`; `nil` when it is not
    /// finite. Numbers from outside (headers, snapshots) go through here instead of
    /// `Int(_:)`, which traps on `inf`, `nan` and anything beyond `Int`'s range.
    @inlinable
    public func checkedInt(_ rule: FloatingPointRoundingRule, clampedTo range: ClosedRange<Int>) -> Int? {
        guard isFinite else { return nil }
        let rounded = self.rounded(rule)
        if rounded <= Double(range.lowerBound) { return range.lowerBound }
        if rounded >= Double(range.upperBound) { return range.upperBound }
        return Int(exactly: rounded) ?? range.upperBound
    }
}
