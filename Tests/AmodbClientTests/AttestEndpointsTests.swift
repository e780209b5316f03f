import Foundation
import Testing

@testable import AmodbClient

/// The App Attest endpoints sit beside the API root: its last path component replaced.
@Suite("App Attest URLs")
struct AttestEndpointsTests {
    @Test(
        "The API's version is replaced by attest/<endpoint>",
        arguments: [
            ("https://proxy.example.com/3", "https://proxy.example.com/attest/"),
            ("https://proxy.example.com/3/", "https://proxy.example.com/attest/"),
            ("http://127.0.0.1:8080/movies/api/3", "http://127.0.0.1:8080/movies/api/attest/"),
            ("https://proxy.example.com/x/3#top", "https://proxy.example.com/x/attest/"),
        ])
    func endpointsReplaceTheLastPathComponent(baseURL: String, prefix: String) throws {
        let endpoints = try AttestEndpoints(baseURL: URL(string: baseURL)!)
        #expect(endpoints.challenge.absoluteString == prefix + "challenge")
        #expect(endpoints.keys.absoluteString == prefix + "keys")
        #expect(endpoints.session.absoluteString == prefix + "session")
    }

    @Test func aQueryOnTheBaseURLIsKept() throws {
        let endpoints = try AttestEndpoints(baseURL: URL(string: "https://proxy.example.com/3?region=eu")!)
        #expect(endpoints.session.absoluteString == "https://proxy.example.com/attest/session?region=eu")
    }

    @Test(
        "A base URL without a version to replace, a host or http(s) is refused",
        arguments: ["https://proxy.example.com", "https://proxy.example.com/", "ftp://proxy.example.com/3", "/3"])
    func unusableBaseURLsAreRefused(baseURL: String) {
        #expect(throws: AmodbClientError.self) { try AttestEndpoints(baseURL: URL(string: baseURL)!) }
    }

    @Test func aSessionWithAnUnusableBaseURLFailsAsAnInvalidRequest() async {
        let session = AppAttestSession(
            baseURL: URL(string: "https://proxy.example.com")!, provider: FakeAttestationProvider(),
            keyStore: InMemoryAttestationKeyStore())
        let error = await #expect(throws: AmodbClientError.self) { try await session.token() }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("last path component") == true)
    }
}
