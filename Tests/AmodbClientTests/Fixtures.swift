/// Small amodb-shaped bodies for the client tests.
enum Fixtures {
    static let trendingPage = """
        {
          "page": 2, "total_pages": 500, "total_results": 10000,
          "results": [
            {"id": 550, "title": "Fight Club", "poster_path": null, "release_date": "",
             "vote_average": 8.4, "media_type": "movie", "something_new": {"x": 1}},
            {"id": 1396, "name": "Breaking Bad", "first_air_date": "2008-01-20", "media_type": "tv"},
            {"id": 287, "name": "Brad Pitt", "profile_path": null, "media_type": "person",
             "known_for": [{"id": 550, "title": "Fight Club", "media_type": "movie"}]}
          ]
        }
        """

    static let movieWithCreditsAndRatings = """
        {
          "id": 550, "title": "Fight Club", "runtime": 139, "genres": [{"id": 18, "name": "Drama"}],
          "credits": {"cast": [{"id": 819, "name": "Edward Norton", "character": "The Narrator", "order": 0}],
                      "crew": [{"id": 7467, "name": "David Fincher", "department": "Directing", "job": "Director"}]},
          "ratings": {"imdb": {"value": 8.8, "votes": 2300000}, "kinopoisk": null, "metacritic": {"value": 67, "votes": null},
                      "rotten_tomatoes": null, "tmdb": {"value": 8.4, "votes": 27000}}
        }
        """

    static let configuration = """
        {"images": {"base_url": "http://img.amodb.dev/t/p/", "secure_base_url": "https://img.amodb.dev/t/p/",
          "poster_sizes": ["w92", "w500", "original"]}, "change_keys": ["title"]}
        """
}
