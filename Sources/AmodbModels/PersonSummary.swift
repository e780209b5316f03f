/// A person as they appear in trending lists.
public struct PersonSummary: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String
    /// Image path starting with `/`; may be `nil`.
    public var profilePath: String?
    public var knownForDepartment: String?
    public var popularity: Double
    /// The titles the person is known for (movies and shows).
    public var knownFor: [TrendingItem]

    public init(
        id: Int, name: String, profilePath: String?, knownForDepartment: String?,
        popularity: Double, knownFor: [TrendingItem]
    ) {
        self.id = id
        self.name = name
        self.profilePath = profilePath
        self.knownForDepartment = knownForDepartment
        self.popularity = popularity
        self.knownFor = knownFor
    }

    enum CodingKeys: String, CodingKey {
        case id, name, popularity
        case profilePath = "profile_path"
        case knownForDepartment = "known_for_department"
        case knownFor = "known_for"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        profilePath = try c.decodeOptionalText(forKey: .profilePath)
        knownForDepartment = try c.decodeOptionalText(forKey: .knownForDepartment)
        popularity = try c.decode(Double.self, forKey: .popularity, default: 0)
        knownFor = try c.decode([TrendingItem].self, forKey: .knownFor, default: [])
    }
}
