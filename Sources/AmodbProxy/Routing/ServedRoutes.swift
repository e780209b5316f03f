package import AmodbModels

/// The routes of `RouteTable` this proxy serves (its defaults and those `AMODB_ROUTES` turns
/// on), and the 404 that names them. A route that is off is no route at all: its path gets
/// the same 404 as any path the proxy does not forward, and never reaches amodb.
package struct ServedRoutes: Sendable, Equatable {
    /// A bit per kind (`Route.Kind.rawValue`): read on every request.
    private let kinds: UInt64
    /// The paths served, as the 404 for any other lists them.
    let text: String

    /// The routes of `kinds`.
    init(_ kinds: Set<Route.Kind>) {
        self.kinds = kinds.reduce(0) { $0 | 1 << UInt64($1.rawValue) }
        let paths = RouteTable.entries.filter { kinds.contains($0.kind) }.map(\.served)
        text = paths.count < 2 ? paths.joined() : paths.dropLast().joined(separator: ", ") + " and " + paths.last!
    }

    /// The table's defaults alone.
    static let byDefault = ServedRoutes(RouteTable.servedByDefault)

    /// Whether `route` is served.
    func serves(_ route: Route) -> Bool {
        kinds & 1 << UInt64(route.kind.rawValue) != 0
    }
}
