import AmodbHTTP
import Foundation
import Testing

@testable import AmodbProxy

/// Every error the proxy makes is an `APIRefusal`, rendered in one place, and the list in
/// docs/caching.md names each reason with exactly its statuses.
struct APIRefusalTests {
    /// The rows of docs/caching.md's "Errors the proxy answers itself": reason → statuses.
    private static func documented() throws -> [String: [Int]] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../docs/caching.md"
        ).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let start = text.range(of: "## Errors the proxy answers itself") else { return [:] }
        var rows: [String: [Int]] = [:]
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 3, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            let reason = String(cells[1].dropFirst().dropLast())
            rows[reason] = cells[2].split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        return rows
    }

    @Test func theDocumentedErrorListNamesEveryReasonWithExactlyItsStatuses() throws {
        let documented = try Self.documented()
        for reason in APIRefusal.Reason.allCases {
            #expect(documented[reason.rawValue] == reason.statuses, "\(reason.rawValue) in docs/caching.md")
        }
        #expect(Set(documented.keys) == Set(APIRefusal.Reason.allCases.map(\.rawValue)), "no reason the code lacks")
    }

    @Test func aRefusalIsAmodbsJSONShapeNeverStored() {
        var headers = HTTPHeaders()
        headers.set("Allow", "GET, HEAD")
        let response = APIRefusal(.methodNotAllowed, #"Method "X" is not allowed"#, headers: headers).response
        #expect(response.status == 405)
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"status_code":405,"status_message":"Method \"X\" is not allowed","success":false}"#)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Allow"] == "GET, HEAD")
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
    }

    @Test func aReasonWithSeveralStatusesKeepsTheOneGivenAndDefaultsToItsFirst() {
        #expect(APIRefusal(.preflightRefused, status: 403, "no").status == 403)
        #expect(APIRefusal(.preflightRefused, "no").status == 400)
        #expect(APIRefusal(.noCall, "later").status == 503)
    }

    @Test func aCallerOverItsRateIsToldWhenInWholeSecondsWithinADay() {
        let refusal = APIRefusal.tooManyRequests({ "again in \($0) s" }, wait: 0.2)
        #expect(refusal.status == 429)
        #expect(refusal.message == "again in 1 s")
        #expect(refusal.headers["Retry-After"] == "1")
        #expect(APIRefusal.tooManyRequests({ "\($0)" }, wait: 1e9).headers["Retry-After"] == "86400")
    }
}
