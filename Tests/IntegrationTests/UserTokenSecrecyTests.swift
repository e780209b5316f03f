import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A user's token (valid or not), its subject and the HS256 secret appear nowhere the proxy
/// writes or sends: not in the access log, the event log, an answer, or what amodb received.
@Suite(.timeLimit(.minutes(1)))
struct UserTokenSecrecyTests {
    @Test func noTokenSubjectOrSecretInAnyOutputOrUpstreamRequest() async throws {
        try await withServer(try UserTokenSetup { $0.accessLog = true }) { setup throws in
            #expect(try await awaitKeySet(setup))
            let now = UserTokenSetup.now
            let subject = "subject-4b7e9d21c3"
            var tokens = [
                try setup.token(subject), try setup.token(subject, kid: "ec-1"), try setup.token(subject, kid: nil),
            ]
            tokens.append(try setup.token(subject, claims: ["exp": Int(now) - 3600]))
            tokens.append(try setup.token(subject, claims: ["aud": "someone-else"]))
            tokens.append(String(tokens[0].dropLast(4)) + "AAAA")
            tokens.append(tokens[1] + ".extra")
            var answers: [String] = []
            for (index, token) in tokens.enumerated() {
                for path in ["/3/movie/550", "/3/trending/movie/week", "/3/movie/\(990_100 + index)", "/3/nothing"] {
                    let response = try await setup.get(path, token: token)
                    answers.append(
                        response.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n") + "\n"
                            + response.text)
                }
            }
            let upstream = setup.proxy.sandbox.receivedRequests.map { request in
                request.target + "\n" + request.headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
            }
            #expect(!upstream.isEmpty)
            let outputs: [(String, [String])] = [
                ("access log", setup.proxy.accessLog.all), ("event log", setup.proxy.logLines), ("answers", answers),
                ("upstream", upstream),
            ]
            var secrets = [SignInProvider.secret, subject]
            for token in tokens {
                secrets.append(token)
                secrets += token.split(separator: ".").map(String.init).filter { $0.count > 8 }
            }
            for (name, lines) in outputs {
                let text = lines.joined(separator: "\n")
                for secret in secrets {
                    #expect(!text.contains(secret), "\(name) holds a token, its subject or the secret")
                }
            }
        }
    }
}
