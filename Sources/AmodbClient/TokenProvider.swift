/// Hands ``AmodbClient`` the bearer token for a request: a signed-in user's current ID
/// token (Firebase's `getIDTokenForcingRefresh(_:)`, Supabase's session, Auth0's
/// credentials manager). `forceRefresh` is `true` after the server refused the last one
/// as invalid (expired, say): return a freshly issued token then. `nil` or a thrown error
/// means no user is signed in, and the call fails with ``AmodbClientError/Kind-swift.struct/unauthorized``;
/// an ``AmodbClientError`` thrown (as ``AppAttestSession/tokenProvider`` does) fails the call as it is.
public typealias TokenProvider = @Sendable (_ forceRefresh: Bool) async throws -> String?

extension AmodbClient {
    /// Where the bearer token comes from.
    enum Credential: Sendable {
        /// No `Authorization` is sent.
        case none
        /// The same token every time (an app token, or amodb's key).
        case fixed(BearerToken)
        /// Asked of the app before each request.
        case provider(TokenProvider)

        /// Whether asking again may give another token.
        var canRefresh: Bool {
            if case .provider = self { true } else { false }
        }

        /// The token to send now, if any.
        func token(forceRefresh: Bool) async throws(AmodbClientError) -> BearerToken? {
            switch self {
            case .none: return nil
            case .fixed(let token): return token
            case .provider(let provider):
                let value: String?
                do {
                    value = try await provider(forceRefresh)
                } catch is CancellationError {
                    throw AmodbClientError(.cancelled)
                } catch let error as AmodbClientError {
                    // A provider built on this library (AppAttestSession) already says what failed.
                    throw error
                } catch {
                    throw AmodbClientError(.noToken("the token provider failed (\(type(of: error)))"))
                }
                guard let value, !value.isEmpty else { throw AmodbClientError(.noToken("the token provider has none")) }
                return BearerToken(value: value)
            }
        }
    }
}
