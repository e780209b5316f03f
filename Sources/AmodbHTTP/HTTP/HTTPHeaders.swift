/// Header fields in the order they arrived or will be sent; duplicates are kept,
/// so a repeated `Content-Length` or `Host` can be seen (RFC 9110 §5.3).
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// The fields, in order.
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// The first value of a field, names compared case-insensitively.
    public subscript(name: String) -> String? {
        // By index: the fields passed over are compared in place, not copied out.
        for index in fields.indices where fields[index].name.caseInsensitiveEquals(name) {
            return fields[index].value
        }
        return nil
    }

    /// Every value of a field, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Adds a field after the others.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field of that name with one.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name, value))
    }

    /// Removes every field of that name.
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// True when a comma-separated field holds the token, e.g. `Connection: keep-alive, Upgrade`.
    public func containsToken(_ token: String, in name: String) -> Bool {
        // Element by element in place: this runs for every request (`Connection`), and
        // splitting into arrays of substrings cost an allocation or two each time.
        fields.contains { field in
            guard field.name.caseInsensitiveEquals(name) else { return false }
            var value = Substring(field.value)
            while true {
                let comma = value.utf8.firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                if value[..<comma].trimmingSpaces().caseInsensitiveEquals(token) { return true }
                guard comma < value.endIndex else { return false }
                value = value[value.utf8.index(after: comma)...]
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

extension StringProtocol {
    /// ASCII case-insensitive comparison, as header names and tokens are compared.
    /// Runs for every field of every request (framing, lookups): native strings are
    /// compared as the bytes they hold, in place.
    func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        let a = utf8
        let b = other.utf8
        guard a.count == b.count else { return false }
        let inPlace = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in
                for index in 0..<x.count where !asciiEqualIgnoringCase(x[index], y[index]) { return false }
                return true
            }
        }
        if let inPlace, let equal = inPlace { return equal }
        return zip(a, b).allSatisfy(asciiEqualIgnoringCase)
    }

    /// Drops leading and trailing spaces and tabs (optional white space, RFC 9110 §5.6.3).
    package func trimmingSpaces() -> Substring {
        let s = Substring(self)
        var start = s.startIndex
        var end = s.endIndex
        while start < end, s[start] == " " || s[start] == "\t" { start = s.index(after: start) }
        while end > start, s[s.index(before: end)] == " " || s[s.index(before: end)] == "\t" {
            end = s.index(before: end)
        }
        return s[start..<end]
    }
}

/// Whether two bytes are the same ASCII character, letters compared without case.
@inline(__always)
private func asciiEqualIgnoringCase(_ x: UInt8, _ y: UInt8) -> Bool {
    x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
}
