import AmodbClient
import AmodbModels
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Retrying after 429")
struct RateLimitTests {
    static func tooMany(retryAfter: String?) -> StubUpstream.Reply {
        .error(
            429, "Your request count (41) is over the allowed limit of 40.",
            headers: retryAfter.map { ["Retry-After": $0] } ?? [:])
    }

    @Test func a429IsRetriedTwiceAfterRetryAfterAndThenSurfaced() async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "3"))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().trending(.movie, .day)
        }
        #expect(stub.requests.count == 3)
        #expect(stub.requestedSleeps == [.seconds(3), .seconds(3)])
        #expect(error?.kind == .rateLimited)
        #expect(error?.status == 429)
        #expect(error?.retryAfter == .seconds(3))
        #expect(error?.isTransient == true)
        #expect(
            error?.message
                == "Too many requests to amodb (429): Your request count (41) is over the allowed limit of 40. Try again in 3 s."
        )
    }

    @Test("The wait is capped at 30 seconds whatever Retry-After asks", arguments: ["31", "120", "86400"])
    func waitIsCapped(retryAfter: String) async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: retryAfter))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().trending(.movie, .day)
        }
        #expect(stub.requestedSleeps == [.seconds(30), .seconds(30)])
        // The error still reports what the server asked for, so an app can say how long.
        #expect(error?.retryAfter == .seconds(Int(retryAfter)!))
    }

    @Test func anHTTPDateRetryAfterIsCappedToo() async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT"))
        _ = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().trending(.movie, .day)
        }
        #expect(stub.requestedSleeps == [.seconds(30), .seconds(30)])
    }

    @Test func aCustomCapIsHonoured() async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "20"))
        _ = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client(retryAfterCap: 5).trending(.movie, .day)
        }
        #expect(stub.requestedSleeps == [.seconds(5), .seconds(5)])
    }

    @Test("A missing or unreadable Retry-After waits one second", arguments: [nil, "", "soon", "-3", "1.5"])
    func missingRetryAfterWaitsOneSecond(retryAfter: String?) async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: retryAfter))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().trending(.movie, .day)
        }
        #expect(stub.requestedSleeps == [.seconds(1), .seconds(1)])
        #expect(error?.retryAfter == nil)
        #expect(error?.message.hasSuffix("Try again in a minute.") == true)
    }

    @Test func a429ThenA200Succeeds() async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "2"), .json(Fixtures.trendingPage))
        let page = try await stub.client().trending(.movie, .day)
        #expect(page.results.count == 3)
        #expect(stub.requests.count == 2)
        #expect(stub.requestedSleeps == [.seconds(2)])
    }

    @Test func twoRateLimitsThenA200Succeeds() async throws {
        let stub = StubUpstream(
            Self.tooMany(retryAfter: "1"), Self.tooMany(retryAfter: "4"), .json(Fixtures.trendingPage))
        _ = try await stub.client().trending(.movie, .day)
        #expect(stub.requests.count == 3)
        #expect(stub.requestedSleeps == [.seconds(1), .seconds(4)])
    }

    @Test func a429AfterARetryIsJudgedLikeAnyOtherStatus() async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "1"), .error(401, "Suspended key."))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client().trending(.movie, .day)
        }
        #expect(error?.kind == .unauthorized)
        #expect(stub.requests.count == 2)
    }

    @Test("The retry budget is configurable", arguments: [0, 1, 3])
    func retryBudget(retries: Int) async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "1"))
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await stub.client(maxRateLimitRetries: retries).trending(.movie, .day)
        }
        #expect(error?.kind == .rateLimited)
        #expect(stub.requests.count == retries + 1)
        #expect(stub.requestedSleeps.count == retries)
    }

    @Test func aSleepInterruptedByCancellationSurfacesAsCancelled() async throws {
        let stub = StubUpstream(Self.tooMany(retryAfter: "1"))
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        let client = AmodbClient(
            baseURL: URL(string: "http://\(stub.host)/3")!, session: URLSession(configuration: configuration),
            sleep: { _ in throw CancellationError() })
        let error = await #expect(throws: AmodbClientError.self) {
            _ = try await client.trending(.movie, .day)
        }
        #expect(error?.kind == .cancelled)
        #expect(error?.message == "The request was cancelled.")
        #expect(stub.requests.count == 1)
    }
}
