/// `/configuration`: where amodb serves images and in which sizes, and the keys its change
/// lists name. It changes rarely; apps fetch it first and build image URLs from it.
public struct APIConfiguration: Codable, Sendable, Equatable {
    public var images: ImageConfiguration
    /// The fields a change list may name (`title`, `overview`, `images`, …).
    public var changeKeys: [String]

    public init(images: ImageConfiguration, changeKeys: [String]) {
        self.images = images
        self.changeKeys = changeKeys
    }

    enum CodingKeys: String, CodingKey {
        case images
        case changeKeys = "change_keys"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        images = try c.decode(ImageConfiguration.self, forKey: .images)
        changeKeys = try c.decode([String].self, forKey: .changeKeys, default: [])
    }
}

/// The `images` object of `/configuration`: an image's URL is a base URL, a size and the
/// image's path (`https://img.amodb.dev/t/p/` + `w500` + `/abc.jpg`).
public struct ImageConfiguration: Codable, Sendable, Equatable {
    /// The `http://` base URL.
    public var baseURL: String
    /// The `https://` base URL, which apps use.
    public var secureBaseURL: String
    public var backdropSizes: [String]
    public var logoSizes: [String]
    public var posterSizes: [String]
    public var profileSizes: [String]
    public var stillSizes: [String]

    public init(
        baseURL: String, secureBaseURL: String, backdropSizes: [String], logoSizes: [String], posterSizes: [String],
        profileSizes: [String], stillSizes: [String]
    ) {
        self.baseURL = baseURL
        self.secureBaseURL = secureBaseURL
        self.backdropSizes = backdropSizes
        self.logoSizes = logoSizes
        self.posterSizes = posterSizes
        self.profileSizes = profileSizes
        self.stillSizes = stillSizes
    }

    enum CodingKeys: String, CodingKey {
        case baseURL = "base_url"
        case secureBaseURL = "secure_base_url"
        case backdropSizes = "backdrop_sizes"
        case logoSizes = "logo_sizes"
        case posterSizes = "poster_sizes"
        case profileSizes = "profile_sizes"
        case stillSizes = "still_sizes"
    }

    /// One base URL is required: without either, no image URL can be built. The other
    /// stands in for a missing one; sizes amodb leaves out are none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let plain = try c.decodeOptionalText(forKey: .baseURL)
        let secure = try c.decodeOptionalText(forKey: .secureBaseURL)
        guard let either = secure ?? plain else {
            throw DecodingError.keyNotFound(
                CodingKeys.secureBaseURL,
                .init(codingPath: c.codingPath, debugDescription: "neither base_url nor secure_base_url"))
        }
        baseURL = plain ?? either
        secureBaseURL = secure ?? either
        backdropSizes = try c.decode([String].self, forKey: .backdropSizes, default: [])
        logoSizes = try c.decode([String].self, forKey: .logoSizes, default: [])
        posterSizes = try c.decode([String].self, forKey: .posterSizes, default: [])
        profileSizes = try c.decode([String].self, forKey: .profileSizes, default: [])
        stillSizes = try c.decode([String].self, forKey: .stillSizes, default: [])
    }
}
