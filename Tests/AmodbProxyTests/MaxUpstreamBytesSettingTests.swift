import Testing

@testable import AmodbProxy

/// `AMODB_MAX_UPSTREAM_BYTES` and `--max-upstream-bytes`: the cap on an amodb body.
struct MaxUpstreamBytesSettingTests {
    private func load(_ arguments: [String], _ environment: [String: String]) throws -> ProxyConfiguration {
        guard
            case .serve(let configuration) = try ConfigurationLoader.load(
                arguments: arguments, environment: ["AMODB_KEY": "k"].merging(environment) { _, new in new })
        else { throw ConfigurationError("not a serve command") }
        return configuration
    }

    @Test func defaultsToTwoMebibytes() throws {
        #expect(try load([], [:]).maxUpstreamBytes == 2 * 1024 * 1024)
    }

    @Test(arguments: [("1048576", 1_048_576), (" 4194304 ", 4_194_304), ("1024", 1024)])
    func acceptsAWholeNumberOfBytes(_ text: String, _ bytes: Int) throws {
        #expect(try load([], ["AMODB_MAX_UPSTREAM_BYTES": text]).maxUpstreamBytes == bytes)
        #expect(try load(["--max-upstream-bytes", text], [:]).maxUpstreamBytes == bytes)
    }

    @Test(arguments: ["0", "1023", "-1", "2MiB", "1e19", "99999999999999999999", "1073741825", ""])
    func refusesAnythingElseNamingTheSetting(_ text: String) {
        #expect {
            try load([], ["AMODB_MAX_UPSTREAM_BYTES": text])
        } throws: { error in
            "\(error)".contains("AMODB_MAX_UPSTREAM_BYTES")
        }
    }
}
