import AmodbModels
import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// `AMODB_LANGUAGES` replaces amodb's 14 translated languages: a language in the list has
/// an entry of its own, any other shares the `en-US` entry and is not sent to amodb.
@Suite(.timeLimit(.minutes(1)))
struct LanguagesSettingTests {
    @Test func aCustomLanguageListDecidesWhichLanguagesAreAskedFor() async throws {
        let sandbox = AmodbSandbox(configuration: .init(apiKey: ProxyHarness.key, requestsPerMinute: 120))
        _ = try sandbox.start()
        try await withServer(sandbox) { sandbox in
            let command = try ConfigurationLoader.load(
                arguments: ["--config", "/dev/null"],
                environment: [
                    "AMODB_KEY": ProxyHarness.key, "HOST": "127.0.0.1", "PORT": "0", "AMODB_CLIENT_RATE_LIMIT": "0",
                    "AMODB_UPSTREAM_URL": sandbox.baseURL, "AMODB_LANGUAGES": "IT-it, pt-BR",
                ])
            guard case .serve(let configuration) = command else {
                Issue.record("not a serve command")
                return
            }
            let harness = try ProxyHarness(.live, configuration: configuration)
            try await withServer(harness) { harness in
                var titles: [String: String] = [:]
                for language in ["it-IT", "pt-BR", "en-US", "de-DE", "fr", "it"] {
                    let response = try await harness.get("/3/movie/238?language=\(language)")
                    titles[language] = try JSONDecoder().decode(MovieDetails.self, from: Data(response.body)).title
                }
                #expect(titles["it-IT"] == "Il padrino", "listed (as `IT-it`, normalized): asked for")
                #expect(titles["it"] == "Il padrino", "a bare language shares its listed region's entry")
                #expect(titles["pt-BR"] == "O Poderoso Chefão", "listed: asked for")
                #expect(titles["en-US"] == "The Godfather")
                #expect(titles["de-DE"] == "The Godfather", "one of amodb's 14, but not listed: the en-US entry")
                #expect(titles["fr"] == "The Godfather", "not listed: the en-US entry")
                #expect(sandbox.receivedRequests.map { $0.queryValue("language") } == ["it-IT", "pt-BR", nil])
            }
        }
    }
}
