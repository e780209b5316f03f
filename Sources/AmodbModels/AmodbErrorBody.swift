/// amodb's error body, which the proxy also uses for its own errors:
/// `{"success": false, "status_code": 7, "status_message": "…"}`.
public struct AmodbErrorBody: Codable, Sendable, Equatable {
    public var success: Bool
    /// amodb's own code (not the HTTP status); in the proxy's own errors, the HTTP status.
    public var statusCode: Int
    /// A sentence for people: what went wrong.
    public var statusMessage: String

    public init(statusCode: Int, statusMessage: String, success: Bool = false) {
        self.success = success
        self.statusCode = statusCode
        self.statusMessage = statusMessage
    }

    enum CodingKeys: String, CodingKey {
        case success
        case statusCode = "status_code"
        case statusMessage = "status_message"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        success = try c.decode(Bool.self, forKey: .success, default: false)
        statusCode = try c.decode(Int.self, forKey: .statusCode, default: 0)
        statusMessage = try c.decode(String.self, forKey: .statusMessage)
    }
}
