import Foundation

/// JSON shaped like amodb's answers, with the quirks AMODB.md lists.
enum Fixtures {
    static let movieItem = """
        {
          "adult": false, "backdrop_path": "/bd.jpg", "genre_ids": [18, 53], "id": 550,
          "original_language": "en", "original_title": "Fight Club", "overview": "An insomniac…",
          "popularity": 61.4, "poster_path": "/p.jpg", "release_date": "1999-10-15",
          "title": "Fight Club", "video": false, "vote_average": 8.4, "vote_count": 27000,
          "media_type": "movie"
        }
        """

    static let tvItem = """
        {
          "backdrop_path": null, "first_air_date": "2008-01-20", "genre_ids": [18], "id": 1396,
          "name": "Breaking Bad", "origin_country": ["US"], "original_language": "en",
          "original_name": "Breaking Bad", "overview": "A teacher…", "popularity": 300.5,
          "poster_path": "/bb.jpg", "vote_average": 8.9, "vote_count": 12000, "media_type": "tv"
        }
        """

    static let personItem = """
        {
          "id": 287, "name": "Brad Pitt", "profile_path": null, "known_for_department": "Acting",
          "popularity": 20.1, "gender": 2, "media_type": "person",
          "known_for": [\(movieItem), \(tvItem)]
        }
        """

    static let trendingPage = """
        {
          "page": 1,
          "results": [\(movieItem), \(tvItem), \(personItem)],
          "total_pages": 500, "total_results": 10000
        }
        """

    static let movieDetails = """
        {
          "adult": false, "backdrop_path": "/bd.jpg", "belongs_to_collection": null,
          "budget": 63000000, "genres": [{"id": 18, "name": "Drama"}],
          "homepage": "", "id": 550, "imdb_id": "tt0137523", "original_language": "en",
          "original_title": "Fight Club", "overview": "An insomniac…", "popularity": 61.4,
          "poster_path": null, "production_companies": [{"id": 508, "name": "Regency"}],
          "release_date": "", "revenue": 100853753, "runtime": 139, "status": "Released",
          "tagline": "Mischief. Mayhem. Soap.", "title": "Fight Club", "video": false,
          "vote_average": 8.4, "vote_count": 27000,
          "credits": {
            "cast": [{"id": 819, "name": "Edward Norton", "character": "The Narrator",
                      "profile_path": "/en.jpg", "order": 0, "credit_id": "52fe4250"}],
            "crew": [{"id": 7467, "name": "David Fincher", "department": "Directing",
                      "job": "Director", "profile_path": null}]
          },
          "ratings": {
            "imdb": {"value": 8.8, "votes": 2300000},
            "kinopoisk": null,
            "metacritic": {"value": 67, "votes": null},
            "rotten_tomatoes": {"value": 79, "votes": null},
            "tmdb": {"value": 8.4, "votes": 27000}
          }
        }
        """

    static let errorBody = """
        {"success": false, "status_code": 7, "status_message": "Invalid API key: You must be granted a valid key."}
        """

    /// Decodes `json` as `T` with a plain `JSONDecoder`, as the client does.
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }
}
