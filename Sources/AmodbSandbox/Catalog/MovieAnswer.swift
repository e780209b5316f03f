import AmodbModels

/// `/movie/{id}` as amodb answers it: one object holding the details' members (with
/// `credits` and `ratings` when asked for) and each other sub-resource asked for, under
/// its own name (`images`, `watch/providers`, …).
struct MovieAnswer: Encodable, Sendable {
    let details: MovieDetails
    /// The sub-resources beyond the details' own fields, by name.
    let appended: [(name: String, value: any Encodable & Sendable)]

    func encode(to encoder: any Encoder) throws {
        // The details write their members; the same object then takes the sub-resources.
        try details.encode(to: encoder)
        var container = encoder.container(keyedBy: ResourceName.self)
        for (name, value) in appended {
            try container.encode(value, forKey: ResourceName(stringValue: name))
        }
    }

    /// A member named at run time.
    private struct ResourceName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            nil
        }
    }
}
