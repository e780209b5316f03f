/// A person of the sandbox's catalog. `known_for` is derived from the credits of the
/// catalog's movies and shows, so it always points at titles that exist.
struct CatalogPerson: Sendable {
    var id: Int
    var name: String
    var profilePath: String?
    /// `Acting`, `Directing`, `Writing`, …
    var department: String
    var popularity: Double
}
