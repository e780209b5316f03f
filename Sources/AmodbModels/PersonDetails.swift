/// `/person/{person_id}`: a person's details.
public struct PersonDetails: Codable, Sendable, Hashable {
    /// amodb's id of the person.
    public var id: Int
    /// The name amodb lists them under.
    public var name: String
    /// A short biography; `""` when amodb has none.
    public var biography: String
    /// `yyyy-mm-dd`; `nil` when unknown.
    public var birthday: String?
    /// `yyyy-mm-dd`; `nil` for the living and when unknown.
    public var deathday: String?
    /// Where they were born, as amodb writes it; `nil` when unknown.
    public var placeOfBirth: String?
    /// `Acting`, `Directing`, `Writing`, …; `nil` when unknown.
    public var knownForDepartment: String?
    /// Image path starting with `/`; may be `nil`.
    public var profilePath: String?
    /// amodb's popularity score.
    public var popularity: Double
    /// Other names they are known by (other scripts, birth names).
    public var alsoKnownAs: [String]
    /// amodb's gender code: 0 not set, 1 female, 2 male, 3 non-binary.
    public var gender: Int
    /// `nm…`; `nil` when unknown.
    public var imdbId: String?
    /// Their own web site; `nil` when none.
    public var homepage: String?

    /// Makes the details of a person.
    public init(
        id: Int, name: String, biography: String, birthday: String?, deathday: String?, placeOfBirth: String?,
        knownForDepartment: String?, profilePath: String?, popularity: Double, alsoKnownAs: [String], gender: Int,
        imdbId: String?, homepage: String?
    ) {
        self.id = id
        self.name = name
        self.biography = biography
        self.birthday = birthday
        self.deathday = deathday
        self.placeOfBirth = placeOfBirth
        self.knownForDepartment = knownForDepartment
        self.profilePath = profilePath
        self.popularity = popularity
        self.alsoKnownAs = alsoKnownAs
        self.gender = gender
        self.imdbId = imdbId
        self.homepage = homepage
    }

    enum CodingKeys: String, CodingKey {
        case id, name, biography, birthday, deathday, popularity, gender, homepage
        case placeOfBirth = "place_of_birth"
        case knownForDepartment = "known_for_department"
        case profilePath = "profile_path"
        case alsoKnownAs = "also_known_as"
        case imdbId = "imdb_id"
    }

    /// `id` and `name` are required; amodb sends `null` for much of what it does not know
    /// (dates, place, ids), and each takes its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        biography = try c.decode(String.self, forKey: .biography, default: "")
        birthday = try c.decodeOptionalText(forKey: .birthday)
        deathday = try c.decodeOptionalText(forKey: .deathday)
        placeOfBirth = try c.decodeOptionalText(forKey: .placeOfBirth)
        knownForDepartment = try c.decodeOptionalText(forKey: .knownForDepartment)
        profilePath = try c.decodeOptionalText(forKey: .profilePath)
        popularity = try c.decode(Double.self, forKey: .popularity, default: 0)
        alsoKnownAs = try c.decode([String].self, forKey: .alsoKnownAs, default: [])
        gender = try c.decode(Int.self, forKey: .gender, default: 0)
        imdbId = try c.decodeOptionalText(forKey: .imdbId)
        homepage = try c.decodeOptionalText(forKey: .homepage)
    }
}
