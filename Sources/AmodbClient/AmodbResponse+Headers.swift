extension AmodbResponse {
    /// Response header fields; names are matched without regard to case (RFC 9110 §5.1).
    public struct Headers: Sendable, Sequence {
        /// The fields in the order given (sorted by name when they come from URLSession,
        /// which does not keep the wire order).
        public private(set) var fields: [(name: String, value: String)]

        /// Makes a header list from name–value pairs.
        public init(_ fields: [(name: String, value: String)] = []) {
            self.fields = fields
        }

        /// The value of the first field called `name` (any case), or `nil`.
        public subscript(_ name: String) -> String? {
            let wanted = name.lowercased()
            return fields.first { $0.name.lowercased() == wanted }?.value
        }

        /// Iterates the fields in order.
        public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
            fields.makeIterator()
        }
    }
}
