import AmodbAttest
import Foundation

/// One of the App Attest recordings in `Samples/` (iOS 14.2 to 14.4, development
/// environment): its attestation and the first assertion of the same key, with what the
/// recording says about them. See `Samples/NOTICE` for where they come from.
struct RecordedSample: Sendable {
    /// The file's name without `.yaml`, such as `ios-14.2`.
    let name: String
    /// The attestation object `attestKey` returned.
    let attestation: [UInt8]
    /// The client data the attestation was made over.
    let attestationClientData: [UInt8]
    /// The key identifier.
    let keyID: [UInt8]
    /// The key's public half as the recording gives it: a DER SubjectPublicKeyInfo.
    let publicKeyInfo: [UInt8]
    /// The app.
    let appID: AppID
    /// When the attestation was made.
    let attestedAt: Date
    /// The assertion `generateAssertion` returned.
    let assertion: [UInt8]
    /// The client data the assertion was made over.
    let assertionClientData: [UInt8]
    /// The assertion's counter.
    let counter: UInt32

    /// The seven recordings' names.
    static let names = [
        "ios-14.2", "ios-14.3-beta-2", "ios-14.3-beta-3", "ios-14.3", "ios-14.4-beta-1", "ios-14.4-beta-2", "ios-14.4",
    ]

    /// What went wrong reading a recording.
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The recording `Samples/<name>.yaml`, from the test bundle's resources.
    init(named name: String) throws {
        guard let url = Bundle.module.url(forResource: name, withExtension: "yaml", subdirectory: "Samples") else {
            throw ReadError(description: "not among the test resources")
        }
        let documents = SampleYAML.documents(in: try String(contentsOf: url, encoding: .utf8))
        guard let attestation = documents.first(where: { $0["type"] == "attestation" }),
            let assertion = documents.first(where: { $0["type"] == "assertion" })
        else { throw ReadError(description: "no attestation or no assertion") }
        func field(_ document: [String: String], _ key: String) throws -> String {
            guard let value = document[key] else { throw ReadError(description: "no \(key)") }
            return value
        }
        func base64(_ document: [String: String], _ key: String) throws -> [UInt8] {
            guard let data = Data(base64Encoded: try field(document, key)) else {
                throw ReadError(description: "\(key) is not base64")
            }
            return Array(data)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let attestedAt = formatter.date(from: try field(attestation, "timestamp")) else {
            throw ReadError(description: "timestamp is not an ISO 8601 time")
        }
        let pem = try field(attestation, "publicKey").split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let publicKeyInfo = Data(base64Encoded: pem), let counter = UInt32(try field(assertion, "counter"))
        else { throw ReadError(description: "publicKey or counter does not read") }
        self.name = name
        self.attestation = try base64(attestation, "attestationBase64")
        attestationClientData = try base64(attestation, "clientDataBase64")
        keyID = try base64(attestation, "keyIdBase64")
        self.publicKeyInfo = Array(publicKeyInfo)
        appID = AppID(
            teamID: try field(attestation, "teamIdentifier"), bundleID: try field(attestation, "bundleIdentifier"))
        self.attestedAt = attestedAt
        self.assertion = try base64(assertion, "assertionBase64")
        assertionClientData = try base64(assertion, "clientDataBase64")
        self.counter = counter
    }
}

/// Just enough YAML for the recordings: documents split by `---`, top-level `key: value`
/// lines (a value in single quotes loses them), and `key: |` block scalars whose indented
/// lines are the value. Other indented lines (nested maps) are skipped.
enum SampleYAML {
    /// Each document's top-level keys and values.
    static func documents(in text: String) -> [[String: String]] {
        var documents: [[String: String]] = []
        var current: [String: String] = [:]
        var blockKey: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "---" {
                if !current.isEmpty { documents.append(current) }
                current = [:]
                blockKey = nil
            } else if line.hasPrefix(" ") {
                if let blockKey { current[blockKey, default: ""] += line.drop { $0 == " " } + "\n" }
            } else if let colon = line.firstIndex(of: ":") {
                let key = String(line[..<colon])
                var value = line[line.index(after: colon)...].drop { $0 == " " }
                if value == "|" {
                    blockKey = key
                    current[key] = ""
                    continue
                }
                blockKey = nil
                if value.count >= 2, value.first == "'", value.last == "'" { value = value.dropFirst().dropLast() }
                current[key] = String(value)
            }
        }
        if !current.isEmpty { documents.append(current) }
        return documents
    }
}
