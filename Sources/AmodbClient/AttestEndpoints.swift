import Foundation

/// Where the proxy serves App Attest: beside the API root, its last path component (the
/// API's version, `3`) replaced by `attest/<endpoint>`. `https://h/x/3` gives
/// `https://h/x/attest/challenge`, `…/attest/keys` and `…/attest/session`; a query on the
/// base URL is kept, as ``AmodbClient`` keeps it for API paths.
struct AttestEndpoints: Sendable, Equatable {
    /// `GET`: a one-time challenge.
    let challenge: URL
    /// `POST`: a new key's attestation.
    let keys: URL
    /// `POST`: an assertion, for a session token.
    let session: URL

    /// The endpoints beside `baseURL`; throws when it is not http(s) with a host and a last
    /// path component to replace.
    init(baseURL: URL) throws(AmodbClientError) {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw AmodbClientError(.invalidRequest("Invalid base URL: it needs http or https and a host."))
        }
        var segments = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false)
        while segments.last?.isEmpty == true { segments.removeLast() }
        guard segments.count > 1 else {
            throw AmodbClientError(
                .invalidRequest(
                    "Invalid base URL: App Attest needs the API's version as its last path component, as in https://proxy.example.com/3."
                ))
        }
        let prefix = segments.dropLast().joined(separator: "/")
        components.percentEncodedFragment = nil
        func endpoint(_ name: String) throws(AmodbClientError) -> URL {
            var endpoint = components
            endpoint.percentEncodedPath = prefix + "/attest/" + name
            guard let url = endpoint.url else { throw AmodbClientError(.invalidRequest("Invalid base URL.")) }
            return url
        }
        challenge = try endpoint("challenge")
        keys = try endpoint("keys")
        session = try endpoint("session")
    }
}
