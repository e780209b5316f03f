import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

struct AppTokensTests {
    @Test func acceptsOnlyABearerTokenItKnows() {
        let key = Secret("the-amodb-key")
        let tokens = AppTokens(
            tokens: [Secret("alpha"), Secret("beta")], file: nil, amodbKey: key, logger: ProxyLogger(sink: { _ in }))
        let identifier = TokenIdentifier(amodbKey: key)
        #expect(tokens.authenticate("Bearer alpha") == identifier.identity(of: Secret("alpha")))
        #expect(tokens.authenticate("bearer beta") == identifier.identity(of: Secret("beta")))
        #expect(tokens.authenticate("Bearer gamma") == nil)
        #expect(tokens.authenticate("Bearer alph") == nil)
        #expect(tokens.authenticate("Bearer alphaa") == nil)
        #expect(tokens.authenticate("Basic YWxwaGE=") == nil)
        #expect(tokens.authenticate("Bearer ") == nil)
        #expect(tokens.authenticate(nil) == nil)
    }

    @Test func namesATokenTheSameWhateverItsPlaceInTheList() {
        let key = Secret("the-amodb-key")
        let logger = ProxyLogger(sink: { _ in })
        let both = AppTokens(
            tokens: [Secret("first-token"), Secret("second-token")], file: nil, amodbKey: key, logger: logger)
        let second = AppTokens(tokens: [Secret("second-token")], file: nil, amodbKey: key, logger: logger)
        #expect(both.authenticate("Bearer second-token") == second.authenticate("Bearer second-token"))
        #expect(both.authenticate("Bearer first-token") != both.authenticate("Bearer second-token"))
    }
}
