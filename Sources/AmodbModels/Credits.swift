/// The `credits` object of movie details: who is in it and who made it.
public struct Credits: Codable, Sendable, Equatable {
    public var cast: [CastMember]
    public var crew: [CrewMember]

    public init(cast: [CastMember], crew: [CrewMember]) {
        self.cast = cast
        self.crew = crew
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        cast = try c.decode([CastMember].self, forKey: .cast, default: [])
        crew = try c.decode([CrewMember].self, forKey: .crew, default: [])
    }
}

/// An actor and the part they play.
public struct CastMember: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String
    public var character: String
    public var profilePath: String?
    /// Billing order, from 0.
    public var order: Int

    public init(id: Int, name: String, character: String, profilePath: String?, order: Int) {
        self.id = id
        self.name = name
        self.character = character
        self.profilePath = profilePath
        self.order = order
    }

    enum CodingKeys: String, CodingKey {
        case id, name, character, order
        case profilePath = "profile_path"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        character = try c.decode(String.self, forKey: .character, default: "")
        profilePath = try c.decodeOptionalText(forKey: .profilePath)
        order = try c.decode(Int.self, forKey: .order, default: 0)
    }
}

/// A member of the crew and their job.
public struct CrewMember: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String
    public var department: String
    public var job: String
    public var profilePath: String?

    public init(id: Int, name: String, department: String, job: String, profilePath: String?) {
        self.id = id
        self.name = name
        self.department = department
        self.job = job
        self.profilePath = profilePath
    }

    enum CodingKeys: String, CodingKey {
        case id, name, department, job
        case profilePath = "profile_path"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        department = try c.decode(String.self, forKey: .department, default: "")
        job = try c.decode(String.self, forKey: .job, default: "")
        profilePath = try c.decodeOptionalText(forKey: .profilePath)
    }
}
