import AmodbProxy
import Testing

@testable import AmodbPlanner

/// `amodb-proxy plan`'s arguments: defaults, lists, `name=value`, and one-line errors for
/// anything else (the binary exits 2 on them).
struct PlanOptionsTests {
    private func options(_ arguments: [String]) throws -> PlanOptions {
        guard case .replay(let options) = try PlanOptions.command(arguments: arguments) else {
            throw ConfigurationError("not a replay")
        }
        return options
    }

    @Test func theDefaultsAreTheThreePlansAndThreeMovieTTLs() throws {
        let parsed = try options(["--access-log", "/var/log/proxy.log"])
        #expect(parsed.accessLog == "/var/log/proxy.log")
        #expect(parsed.plans == [20, 40, 120])
        #expect(parsed.movieTTLs == [1800, 21_600, 86_400])
        #expect(parsed.missWait == 2)
        #expect(parsed.trendingTTL == ProxyConfiguration.defaults.cacheTTL)
    }

    @Test func everyOptionIsRead() throws {
        let parsed = try options([
            "--plans", "40, 20,40", "--movie-ttls=600,3600.5", "--miss-wait", "0.5", "--access-log=-",
        ])
        #expect(parsed.accessLog == "-")
        #expect(parsed.plans == [40, 20], "duplicates dropped, order kept")
        #expect(parsed.movieTTLs == [600, 3600.5])
        #expect(parsed.missWait == 0.5)
    }

    @Test func planNeedsNoKeyAndReadsNoSettingsAndItsArgumentsAreThePlanners() throws {
        let parsed = try ConfigurationLoader.load(
            arguments: ["plan", "--access-log", "x.log", "--port", "1"],
            environment: ["AMODB_CACHE_TTL": "not a number", "AMODB_CONFIG": "/nonexistent"])
        guard case .plan(let arguments) = parsed else {
            Issue.record("expected a plan, got \(parsed)")
            return
        }
        #expect(arguments == ["--access-log", "x.log", "--port", "1"])
    }

    @Test func helpAfterPlanIsTheHelpAndItDescribesEveryOption() throws {
        #expect(try PlanOptions.command(arguments: ["--access-log", "x", "--help"]) == .help)
        #expect(try PlanOptions.command(arguments: ["-h"]) == .help)
        #expect(ConfigurationLoader.usage.contains("amodb-proxy plan --access-log FILE"))
        for option in ["--plans", "--movie-ttls", "--miss-wait"] {
            #expect(ConfigurationLoader.planUsage.contains(option))
            #expect(throws: Never.self) { try PlanOptions.command(arguments: ["--access-log", "x", option, "1"]) }
        }
    }

    @Test(arguments: [
        ([], "plan needs --access-log FILE"),
        (["--access-log"], "--access-log needs a value"),
        (["--access-log", ""], "--access-log needs a file name"),
        (["--access-log", "x", "--plans", "20,abc"], "--plans must list"),
        (["--access-log", "x", "--plans", "0"], "--plans must list"),
        (["--access-log", "x", "--plans", ""], "--plans must list"),
        (["--access-log", "x", "--plans", "1,2,3,4,5,6,7,8,9,10,11,12,13"], "at most 12"),
        (["--access-log", "x", "--movie-ttls", "30m"], "--movie-ttls must list"),
        (["--access-log", "x", "--movie-ttls", "1800,,3600"], "--movie-ttls must list"),
        (["--access-log", "x", "--movie-ttls", "nan"], "--movie-ttls must list"),
        (["--access-log", "x", "--miss-wait", "-1"], "--miss-wait must be a number of seconds from 0 to 60"),
        (["--access-log", "x", "--miss-wait", "61"], "--miss-wait must be"),
        (["--access-log", "x", "--port", "8080"], "plan: unknown option --port"),
        (["--access-log", "x", "extra"], "plan: unknown option extra"),
    ])
    func badArgumentsAreOneLineErrors(_ arguments: [String], _ said: String) {
        do {
            let parsed = try PlanOptions.command(arguments: arguments)
            Issue.record("accepted: \(parsed)")
        } catch {
            #expect(error.description.contains(said), "\(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }
}
