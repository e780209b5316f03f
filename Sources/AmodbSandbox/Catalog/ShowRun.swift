/// How far a show has run: what `/tv/{id}` adds to a show's list item.
struct ShowRun: Sendable {
    var seasons: Int
    var episodes: Int
    /// `yyyy-mm-dd` of the latest episode aired, or `nil` when none has.
    var lastAirDate: String?
    /// `Returning Series`, `Ended`, `Canceled`, `In Production`.
    var status: String
}
