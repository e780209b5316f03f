// The sub-resources `append_to_response` adds to a movie's details, in amodb's (TMDB v3)
// shapes. Encodable only: the stand-in writes them, and the apps decode what they use.
// `credits` and `ratings` are not here: they are fields of `MovieDetails` itself.

/// `images`: the movie's backdrops, logos and posters.
struct MovieImages: Encodable, Sendable {
    var backdrops: [ImageFile]
    var logos: [ImageFile]
    var posters: [ImageFile]
}

/// One image of `images`.
struct ImageFile: Encodable, Sendable {
    var aspectRatio: Double
    var height: Int
    var width: Int
    /// The language of the text in the image; `nil` (sent as `null`) for an image without text.
    var language: String?
    var filePath: String
    var voteAverage: Double
    var voteCount: Int

    enum CodingKeys: String, CodingKey {
        case height, width
        case aspectRatio = "aspect_ratio"
        case language = "iso_639_1"
        case filePath = "file_path"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
    }
}

/// `videos`: trailers, teasers and clips.
struct MovieVideos: Encodable, Sendable {
    var results: [Video]
}

/// One video of `videos`, hosted on YouTube.
struct Video: Encodable, Sendable {
    var id: String
    /// The site's own id (`https://www.youtube.com/watch?v=<key>`).
    var key: String
    var name: String
    var site: String
    /// `Trailer`, `Teaser`, `Clip`, `Featurette`, …
    var type: String
    var official: Bool
    /// `yyyy-mm-ddThh:mm:ss.000Z`.
    var publishedAt: String
    var language: String
    var country: String
    /// The height in pixels: 720, 1080, 2160.
    var size: Int

    enum CodingKeys: String, CodingKey {
        case id, key, name, site, type, official, size
        case publishedAt = "published_at"
        case language = "iso_639_1"
        case country = "iso_3166_1"
    }
}

/// `external_ids`: the movie's ids elsewhere; `null` where it has none.
struct ExternalIDs: Encodable, Sendable {
    var imdbId: String?
    var wikidataId: String?
    var facebookId: String?
    var instagramId: String?
    var twitterId: String?

    enum CodingKeys: String, CodingKey {
        case imdbId = "imdb_id"
        case wikidataId = "wikidata_id"
        case facebookId = "facebook_id"
        case instagramId = "instagram_id"
        case twitterId = "twitter_id"
    }
}

/// `keywords`.
struct MovieKeywords: Encodable, Sendable {
    var keywords: [Keyword]
}

/// One keyword: amodb's id and its name.
struct Keyword: Encodable, Sendable {
    var id: Int
    var name: String
}

/// `release_dates`: per country, its releases (theatrical, digital, …) and certification.
struct ReleaseDates: Encodable, Sendable {
    var results: [CountryReleases]
}

/// The releases in one country.
struct CountryReleases: Encodable, Sendable {
    var country: String
    var releaseDates: [Release]

    enum CodingKeys: String, CodingKey {
        case country = "iso_3166_1"
        case releaseDates = "release_dates"
    }
}

/// One release: `type` 1 premiere, 2 limited, 3 theatrical, 4 digital, 5 physical, 6 TV.
struct Release: Encodable, Sendable {
    /// `R`, `PG-13`, `16`, `15`, or `""`.
    var certification: String
    var descriptors: [String]
    /// The release's language, or `""`.
    var language: String
    var note: String
    /// `yyyy-mm-ddT00:00:00.000Z`.
    var releaseDate: String
    var type: Int

    enum CodingKeys: String, CodingKey {
        case certification, descriptors, note, type
        case language = "iso_639_1"
        case releaseDate = "release_date"
    }
}

/// `watch/providers`: where to stream, rent or buy it, per country.
struct WatchProviders: Encodable, Sendable {
    var results: [String: CountryProviders]
}

/// The providers in one country.
struct CountryProviders: Encodable, Sendable {
    /// The movie's watch page on amodb for that country.
    var link: String
    var flatrate: [WatchProvider]
    var rent: [WatchProvider]
    var buy: [WatchProvider]
}

/// One streaming service or shop.
struct WatchProvider: Encodable, Sendable {
    var logoPath: String
    var providerId: Int
    var providerName: String
    var displayPriority: Int

    enum CodingKeys: String, CodingKey {
        case logoPath = "logo_path"
        case providerId = "provider_id"
        case providerName = "provider_name"
        case displayPriority = "display_priority"
    }
}

/// A paged list (`recommendations`, `similar`, `reviews`, `lists`): its first page.
struct ResultPage<Item: Encodable & Sendable>: Encodable, Sendable {
    var page: Int
    var results: [Item]
    var totalPages: Int
    var totalResults: Int

    enum CodingKeys: String, CodingKey {
        case page, results
        case totalPages = "total_pages"
        case totalResults = "total_results"
    }
}

/// One review of `reviews`.
struct Review: Encodable, Sendable {
    var author: String
    var authorDetails: ReviewAuthor
    var content: String
    var createdAt: String
    var id: String
    var updatedAt: String
    var url: String

    enum CodingKeys: String, CodingKey {
        case author, content, id, url
        case authorDetails = "author_details"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// Who wrote a review, and the score they gave (`null` when they gave none).
struct ReviewAuthor: Encodable, Sendable {
    var name: String
    var username: String
    var avatarPath: String?
    var rating: Double?

    enum CodingKeys: String, CodingKey {
        case name, username, rating
        case avatarPath = "avatar_path"
    }
}

/// One user list of `lists` that holds the movie.
struct UserList: Encodable, Sendable {
    var description: String
    var favoriteCount: Int
    var id: Int
    var itemCount: Int
    var language: String
    var listType: String
    var name: String
    var posterPath: String?

    enum CodingKeys: String, CodingKey {
        case description, id, name
        case favoriteCount = "favorite_count"
        case itemCount = "item_count"
        case language = "iso_639_1"
        case listType = "list_type"
        case posterPath = "poster_path"
    }
}

/// `translations`: the movie's texts in each language amodb has.
struct MovieTranslations: Encodable, Sendable {
    var translations: [Translation]
}

/// One language's texts.
struct Translation: Encodable, Sendable {
    var country: String
    var language: String
    /// The language's own name (`Deutsch`).
    var name: String
    var englishName: String
    var data: TranslatedTexts

    enum CodingKeys: String, CodingKey {
        case name, data
        case country = "iso_3166_1"
        case language = "iso_639_1"
        case englishName = "english_name"
    }
}

/// The texts of one translation; `""` where none was translated.
struct TranslatedTexts: Encodable, Sendable {
    var homepage: String
    var overview: String
    var runtime: Int
    var tagline: String
    var title: String
}

/// `alternative_titles`: the movie's titles in other countries.
struct AlternativeTitles: Encodable, Sendable {
    var titles: [AlternativeTitle]
}

/// One title and where it is used.
struct AlternativeTitle: Encodable, Sendable {
    var country: String
    var title: String
    /// `""`, or what kind of title it is (`working title`).
    var type: String

    enum CodingKeys: String, CodingKey {
        case title, type
        case country = "iso_3166_1"
    }
}

/// `changes`: what changed in the last day; the stand-in's catalog never changes.
struct MovieChanges: Encodable, Sendable {
    var changes: [String]
}
