import AmodbModels
import Foundation

/// amodb's movie lists (`/movie/popular`, `/movie/top_rated`, `/movie/now_playing`,
/// `/movie/upcoming`) and `/search/movie`, over the catalog's movies. Every list holds the
/// whole catalog (up to `listLength`), so each has five full pages as trending lists do;
/// ties are broken by id, so an order never depends on a dictionary's.
extension SandboxCatalog {
    /// The catalog's movies in `list`'s order, as ids:
    /// - `popular`: most popular first;
    /// - `topRated`: best average first, then most votes;
    /// - `nowPlaying`: released titles, latest release first, then the titles still to come;
    /// - `upcoming`: titles still to come, soonest first (undated last), then released ones,
    ///   latest first.
    static func order(_ movies: [CatalogMovie], as list: MovieList) -> [Int] {
        let ordered: [CatalogMovie]
        switch list {
        case .popular:
            ordered = movies.sorted { ($0.popularity, $1.id) > ($1.popularity, $0.id) }
        case .topRated:
            ordered = movies.sorted {
                ($0.voteAverage, $0.voteCount, $1.id) > ($1.voteAverage, $1.voteCount, $0.id)
            }
        case .nowPlaying:
            ordered = releasedLatestFirst(movies) + toComeSoonestFirst(movies)
        case .upcoming:
            ordered = toComeSoonestFirst(movies) + releasedLatestFirst(movies)
        }
        return ordered.prefix(listLength).map(\.id)
    }

    /// One page of a movie list in `language`; past the last page, an empty page with the
    /// list's totals, as trending pages are.
    func moviePage(_ list: MovieList, page: Int, language: String) -> MoviePage {
        let ids = movieLists[list] ?? []
        var answer = self.page(page, of: ids.compactMap { movies[$0] }, language: language)
        switch list {
        // The dates its own titles cover: those released, or those still to come.
        case .nowPlaying: answer.dates = Self.dateRange(of: Self.releasedLatestFirst(Array(movies.values)))
        case .upcoming: answer.dates = Self.dateRange(of: Self.toComeSoonestFirst(Array(movies.values)))
        case .popular, .topRated: break
        }
        return answer
    }

    /// One page of the movies whose title contains `text` (a request's canonical search:
    /// lower case, composed), most popular first. A title is its name in `language`, its
    /// English name or its original name, as amodb finds a movie by any of its titles.
    /// No match is page 1 of 1 with no results, as amodb answers it.
    func searchPage(_ text: String, page: Int, language: String) -> MoviePage {
        let matches = movies.values.filter { movie in
            [movie.title(in: language), movie.title, movie.originalTitle].contains {
                $0.lowercased().precomposedStringWithCanonicalMapping.contains(text)
            }
        }
        .sorted { ($0.popularity, $1.id) > ($1.popularity, $0.id) }
        var answer = self.page(page, of: matches, language: language)
        answer.totalPages = max(answer.totalPages, 1)
        return answer
    }

    /// Page `page` (from 1) of `movies`, `pageSize` to a page, titles in `language`.
    private func page(_ page: Int, of movies: [CatalogMovie], language: String) -> MoviePage {
        let start = (page - 1) * Self.pageSize
        let slice = start < movies.count ? movies[start..<min(start + Self.pageSize, movies.count)] : []
        return MoviePage(
            page: page, results: slice.map { $0.summary(in: language) },
            totalPages: (movies.count + Self.pageSize - 1) / Self.pageSize, totalResults: movies.count)
    }

    /// The released titles, latest release first.
    private static func releasedLatestFirst(_ movies: [CatalogMovie]) -> [CatalogMovie] {
        movies.filter { $0.status == "Released" && !$0.releaseDate.isEmpty }
            .sorted { ($0.releaseDate, $1.id) > ($1.releaseDate, $0.id) }
    }

    /// The titles not released yet: dated ones soonest first (`yyyy-mm-dd` sorts as text),
    /// then those without a date, which would sort first as `""`.
    private static func toComeSoonestFirst(_ movies: [CatalogMovie]) -> [CatalogMovie] {
        movies.filter { $0.status != "Released" || $0.releaseDate.isEmpty }
            .sorted { first, second in
                if first.releaseDate.isEmpty != second.releaseDate.isEmpty { return second.releaseDate.isEmpty }
                return (first.releaseDate, first.id) < (second.releaseDate, second.id)
            }
    }

    /// The earliest and latest release date among `movies`, or `nil` when none is dated.
    private static func dateRange(of movies: [CatalogMovie]) -> MoviePage.DateRange? {
        let dates = movies.map(\.releaseDate).filter { !$0.isEmpty }
        guard let earliest = dates.min(), let latest = dates.max() else { return nil }
        return MoviePage.DateRange(maximum: latest, minimum: earliest)
    }
}
