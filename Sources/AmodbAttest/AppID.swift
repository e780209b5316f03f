import AmodbCrypto

/// An app whose keys a verifier accepts: its Apple team identifier and bundle identifier.
/// App Attest names the app by the SHA-256 of `"<teamID>.<bundleID>"`, the relying party
/// ID hash at the start of every authenticator data.
public struct AppID: Sendable, Hashable, CustomStringConvertible {
    /// The team identifier, such as `6MURL8TA57`.
    public let teamID: String
    /// The bundle identifier, such as `com.example.app`.
    public let bundleID: String

    /// The app `bundleID` of the team `teamID`.
    public init(teamID: String, bundleID: String) {
        self.teamID = teamID
        self.bundleID = bundleID
    }

    /// `"<teamID>.<bundleID>"`, the App ID Apple hashes.
    public var description: String { "\(teamID).\(bundleID)" }

    /// SHA-256 of the App ID: the relying party ID hash App Attest writes for this app.
    public var relyingPartyIDHash: [UInt8] { SHA256.hash(Array(description.utf8)) }
}
