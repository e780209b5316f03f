import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// With users' ID tokens, the per-client rate limit and the share of the calls for misses
/// follow the user (`iss`, `sub`), not the address: a user keeps their bucket across
/// addresses, and users behind one address (a carrier's NAT) each have their own. The
/// access log names the user by a short keyed hash, never by the subject.
@Suite(.timeLimit(.minutes(1)))
struct UserLimitTests {
    static let carrierNAT = "198.51.100.7"

    private static func limited(_ clock: ManualClock) throws -> UserTokenSetup {
        try UserTokenSetup(clock: clock) {
            $0.trustedProxies = ["127.0.0.1"]
            $0.clientRateLimit = 1  // one a minute, and the clock stands still: no refill
            $0.clientBurst = 2
        }
    }

    @Test func twoUsersBehindOneAddressEachHaveTheirOwnBucket() async throws {
        let clock = ManualClock(UserTokenSetup.now)
        try await withServer(try Self.limited(clock)) { setup throws in
            #expect(try await awaitKeySet(setup))
            let alice = try setup.token("alice", now: clock.now())
            let bob = try setup.token("bob", kid: "ec-1", now: clock.now())
            let nat = ["X-Forwarded-For": Self.carrierNAT]
            for _ in 0..<2 { #expect(try await setup.get(token: alice, headers: nat).status == 200) }
            #expect(try await setup.get(token: alice, headers: nat).status == 429)
            #expect(
                try await setup.get(token: bob, headers: nat).status == 200,
                "bob, at the same address, has his own bucket")
        }
    }

    @Test func aUserKeepsTheirBucketWhenTheirAddressChanges() async throws {
        let clock = ManualClock(UserTokenSetup.now)
        try await withServer(try Self.limited(clock)) { setup throws in
            #expect(try await awaitKeySet(setup))
            let alice = try setup.token("alice", now: clock.now())
            #expect(try await setup.get(token: alice, headers: ["X-Forwarded-For": "203.0.113.1"]).status == 200)
            #expect(try await setup.get(token: alice, headers: ["X-Forwarded-For": "203.0.113.2"]).status == 200)
            // A fresh token for the same user (a refresh) is the same user.
            let refreshed = try setup.token("alice", kid: nil, now: clock.now() + 1)
            #expect(
                try await setup.get(token: refreshed, headers: ["X-Forwarded-For": "192.0.2.9"]).status == 429,
                "a new address buys no bucket")
        }
    }

    @Test func madeUpIdsFromOneUserLeaveAnotherUserBehindTheSameAddressTheirShare() async throws {
        // AMODB_RATE_LIMIT 40, a share of an eighth: 5 calls for misses per user per minute.
        try await withServer(try UserTokenSetup { $0.trustedProxies = ["127.0.0.1"] }) { setup throws in
            #expect(try await awaitKeySet(setup))
            let alice = try setup.token("alice")
            let bob = try setup.token("bob")
            let nat = ["X-Forwarded-For": Self.carrierNAT]
            for id in 990_001...990_005 {
                #expect(try await setup.get("/3/movie/\(id)", token: alice, headers: nat).status == 404)
            }
            let spent = try await setup.get("/3/movie/990006", token: alice, headers: nat)
            #expect(spent.status == 503)
            #expect(spent.text.contains("used its share"))
            #expect(
                try await setup.get("/3/movie/990006", token: bob, headers: nat).status == 404, "bob's share is his own"
            )
            #expect(setup.proxy.sandbox.totalRequestCount == 6)
        }
    }

    @Test func theAccessLogNamesAUserByAShortKeyedHashNeverTheSubject() async throws {
        let app = "app-token-61c0d9e2a7b4f3"
        try await withServer(try UserTokenSetup { $0.clientTokens = [Secret(app)] }) { setup throws in
            #expect(try await awaitKeySet(setup))
            let subject = "000123.8f2c4e6a9b1d3f5e.0456"  // the shape of a Sign in with Apple subject
            for token in [
                try setup.token(subject), try setup.token(subject, kid: "ec-1"),
                try setup.token("someone-else", kid: nil), app,
            ] {
                #expect(try await setup.get(token: token).status == 200)
            }
            let lines = setup.proxy.accessLog.all.filter { $0.contains("/3/movie/{movie_id}") }
            #expect(lines.count == 4)
            let users = lines.map { line -> String? in
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return object?["user"] as? String
            }
            #expect(users[0] != nil && users[0] == users[1], "one user, whichever key signed")
            #expect(users[2] != nil && users[2] != users[0])
            #expect(users[3] == nil, "an app token is no user")
            for user in users.compactMap({ $0 }) {
                #expect(user.count == 16 && user.allSatisfy(\.isHexDigit))
            }
            #expect(!lines.joined().contains(subject) && !lines.joined().contains("someone-else"))
        }
    }
}
