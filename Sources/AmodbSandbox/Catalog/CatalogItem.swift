/// A reference to one entry of the catalog, as trending lists and `known_for` hold them.
enum CatalogItem: Sendable, Hashable {
    case movie(Int)
    case tv(Int)
    case person(Int)
}
