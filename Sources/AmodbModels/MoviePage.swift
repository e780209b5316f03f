/// One page of a movie list (`/movie/popular`, `/movie/top_rated`, `/movie/now_playing`,
/// `/movie/upcoming`) or of `/search/movie`.
public struct MoviePage: Codable, Sendable, Hashable {
    /// The page number, from 1.
    public var page: Int
    /// The movies on this page (20 on a full page; none past the last page).
    public var results: [MovieSummary]
    /// How many pages the whole list has.
    public var totalPages: Int
    /// How many movies the whole list has.
    public var totalResults: Int
    /// The release dates `now_playing` and `upcoming` cover; `nil` for the other lists.
    public var dates: DateRange?

    /// Makes a page.
    public init(page: Int, results: [MovieSummary], totalPages: Int, totalResults: Int, dates: DateRange? = nil) {
        self.page = page
        self.results = results
        self.totalPages = totalPages
        self.totalResults = totalResults
        self.dates = dates
    }

    enum CodingKeys: String, CodingKey {
        case page, results, dates
        case totalPages = "total_pages"
        case totalResults = "total_results"
    }

    /// Totals amodb leaves out fall back to this page's own counts, as `TrendingPage`'s do.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        page = try c.decode(Int.self, forKey: .page)
        results = try c.decode([MovieSummary].self, forKey: .results)
        totalPages = try c.decode(Int.self, forKey: .totalPages, default: page)
        totalResults = try c.decode(Int.self, forKey: .totalResults, default: results.count)
        dates = try c.decodeIfPresent(DateRange.self, forKey: .dates)
    }

    /// The `dates` object: the first and last release date a list covers, `yyyy-mm-dd`.
    public struct DateRange: Codable, Sendable, Hashable {
        /// The latest release date covered.
        public var maximum: String
        /// The earliest release date covered.
        public var minimum: String

        /// Makes a range.
        public init(maximum: String, minimum: String) {
            self.maximum = maximum
            self.minimum = minimum
        }
    }
}
