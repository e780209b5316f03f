// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "amodb-proxy",
    // The platforms apps build the two libraries below for. The server and every other
    // target build on Linux only (epoll, Glibc); on a Mac, through the Dockerfile.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    // What another package may depend on: the models and the client, for apps; and the
    // server as a program. Every other target is internal to this package.
    products: [
        .library(name: "AmodbModels", targets: ["AmodbModels"]),
        .library(name: "AmodbClient", targets: ["AmodbClient"]),
        .executable(name: "amodb-proxy", targets: ["amodb-proxy"]),
    ],
    targets: [
        // Codable value types and the route table shared by server and client; no I/O.
        .target(name: "AmodbModels"),
        // async/await client over URLSession, for apps (iOS, macOS) and for the tests.
        .target(name: "AmodbClient", dependencies: ["AmodbModels"]),
        // A raw-socket HTTP/1.1 server on Dispatch (parser, connections, event loops, on AmodbSockets);
        // knows nothing of amodb: the application answers requests and words its errors.
        .target(name: "AmodbHTTP", dependencies: ["AmodbBytes", "AmodbSockets", "CSystemShims"]),
        // ASCII on raw bytes, written once: RFC 9110's character classes, case folding, and the
        // one comparison of bytes with a literal, for the HTTP parser, compression and the proxy.
        .target(name: "AmodbBytes"),
        // The proxy: routing, cache, upstream fetcher, on the AmodbHTTP server.
        .target(
            name: "AmodbProxy",
            dependencies: [
                "AmodbBytes", "AmodbHTTP", "AmodbSockets", "AmodbModels", "AmodbRedis", "AmodbCompression",
                "AmodbCrypto", "AmodbAttest",
            ]),
        // `amodb-proxy plan`: reads an access log back and replays it through the proxy's own
        // cache and budget policy on a simulated clock, for each plan and TTL compared.
        .target(name: "AmodbPlanner", dependencies: ["AmodbProxy", "AmodbHTTP", "AmodbModels"]),
        // C wrappers for the few Linux calls Glibc's Swift module leaves out (accept4, posix_spawn's _np actions).
        .target(name: "CSystemShims"),
        // The libc socket calls, shared by the HTTP server and the Redis client.
        .target(name: "AmodbSockets", dependencies: ["CSystemShims"]),
        // gzip and br answers: Accept-Encoding negotiation, encoders and bounded decoders. br
        // uses the system's libbrotlienc and libbrotlidec (Debian libbrotli1), loaded at run
        // time, and is not offered where they are missing.
        .target(name: "AmodbCompression", dependencies: ["AmodbBytes", "CZlib", "AmodbDynamicLibrary"]),
        // The system's zlib (Debian zlib1g-dev; the toolchain already depends on it).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // HMAC-SHA256, constant-time comparison and signatures over the system's OpenSSL 3
        // libcrypto (Debian libssl3), loaded at run time, behind a safe interface.
        .target(name: "AmodbCrypto", dependencies: ["AmodbDynamicLibrary"]),
        // Apple App Attest verified offline: a strict bounded CBOR reader, the leaf's nonce
        // extension, the chain to Apple's root through AmodbCrypto's libcrypto, assertions.
        .target(name: "AmodbAttest", dependencies: ["AmodbCrypto"]),
        // Synthetic App Attest for tests: a root and an intermediate made at run time, device
        // keys, attestations for any key, challenge and app, and assertions with a counter.
        .target(name: "AmodbAttestTestSupport", dependencies: ["AmodbAttest", "AmodbCrypto"]),
        // dlopen and dlsym for the libraries loaded at run time rather than linked, so that
        // building needs none of their headers (no libssl-dev, no libbrotli-dev).
        .target(name: "AmodbDynamicLibrary"),
        // A local stand-in for amodb (statuses, headers, rate limit, delays).
        .target(name: "AmodbSandbox", dependencies: ["AmodbHTTP", "AmodbModels"]),
        // A RESP2 client of our own over raw non-blocking sockets on Dispatch, for replicas
        // that share one cache and one budget; knows nothing of the proxy.
        // `rediss://` uses the system's libssl (Debian libssl3), loaded at run time.
        .target(name: "AmodbRedis", dependencies: ["AmodbSockets", "AmodbDynamicLibrary"]),
        // Starts and stops a real redis-server on a free port, for the tests that need one.
        .target(name: "AmodbRedisTestSupport", dependencies: ["AmodbRedis", "AmodbTestSupport"]),
        // main only: load configuration, start, wait for signals.
        // The release binary's compiler and linker flags (cross-module optimization; lld with
        // packed relative relocations) are passed by scripts/build-release.sh, not set here:
        // SwiftPM refuses `unsafeFlags` in a versioned dependency, and apps depend on this package.
        .executableTarget(
            name: "amodb-proxy",
            dependencies: [
                "AmodbProxy", "AmodbPlanner", "AmodbSandbox", "AmodbCrypto", "AmodbCompression", "CSystemShims",
            ]),
        // Helpers for any socket test, the server's own included: raw client, `eventually`, scoped
        // servers; and `ChildProcess`, posix_spawn for the tests that start programs.
        .target(name: "AmodbHTTPTestSupport", dependencies: ["CSystemShims", "CTestParallelism"]),
        // Bounds how many test cases run at once (a constructor sets Swift Testing's width
        // before its runner starts); linked into the test binary through AmodbHTTPTestSupport.
        .target(name: "CTestParallelism"),
        // Helpers shared by the proxy's test targets (harnesses, stand-ins, servers on port 0); re-exports AmodbHTTPTestSupport.
        .target(
            name: "AmodbTestSupport",
            dependencies: [
                "AmodbHTTP", "AmodbHTTPTestSupport", "AmodbProxy", "AmodbPlanner", "AmodbSandbox", "AmodbClient",
                "AmodbCrypto",
            ]),
        .testTarget(name: "AmodbModelsTests", dependencies: ["AmodbModels"]),
        // The server alone: parser, connection state machine, HTTPServer, hostile bytes.
        .testTarget(name: "AmodbBytesTests", dependencies: ["AmodbBytes"]),
        .testTarget(
            name: "AmodbHTTPTests", dependencies: ["AmodbBytes", "AmodbHTTP", "AmodbHTTPTestSupport", "AmodbSockets"]),
        .testTarget(
            name: "AmodbCompressionTests",
            dependencies: ["AmodbCompression", "AmodbHTTP", "AmodbSandbox", "AmodbHTTPTestSupport"]
        ),
        .testTarget(name: "AmodbCryptoTests", dependencies: ["AmodbCrypto", "AmodbDynamicLibrary"]),
        // App Attest: the CBOR reader, attestations and assertions recorded on iPhones (Samples/),
        // each field tampered with, and synthetic chains.
        .testTarget(
            name: "AmodbAttestTests", dependencies: ["AmodbAttest", "AmodbAttestTestSupport", "AmodbCrypto"],
            resources: [.copy("Samples")]),
        // The client; App Attest against a stand-in whose SHA-256 is AmodbCrypto's, not the client's own.
        .testTarget(name: "AmodbClientTests", dependencies: ["AmodbClient", "AmodbCrypto", "AmodbTestSupport"]),
        .testTarget(
            name: "AmodbProxyTests",
            dependencies: ["AmodbBytes", "AmodbHTTP", "AmodbProxy", "AmodbPlanner", "AmodbTestSupport"]),
        // The planner: its options, the access-log reader and the report.
        .testTarget(name: "AmodbPlannerTests", dependencies: ["AmodbPlanner", "AmodbProxy", "AmodbTestSupport"]),
        .testTarget(name: "AmodbSandboxTests", dependencies: ["AmodbHTTP", "AmodbSandbox", "AmodbTestSupport"]),
        .testTarget(
            name: "AmodbRedisTests", dependencies: ["AmodbRedis", "AmodbRedisTestSupport", "AmodbTestSupport"]),
        // Replicas sharing one Redis: several in-process proxies, one real redis-server.
        .testTarget(
            name: "FleetTests",
            dependencies: [
                "AmodbProxy", "AmodbSandbox", "AmodbRedis", "AmodbRedisTestSupport", "AmodbTestSupport", "AmodbAttest",
                "AmodbAttestTestSupport", "AmodbCrypto",
            ]),
        .testTarget(
            name: "IntegrationTests",
            // The executable too: the flag tests run the built binary, as an operator would.
            dependencies: [
                "AmodbProxy", "AmodbPlanner", "AmodbSandbox", "AmodbClient", "AmodbTestSupport", "AmodbCompression",
                "AmodbAttest", "AmodbAttestTestSupport", "AmodbCrypto",
                "amodb-proxy",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The same upcoming features for every Swift target (as swift-log does); system
// libraries take no settings. No `unsafeFlags`, here or on any target: apps take
// AmodbClient and AmodbModels from this package at a version tag, which SwiftPM refuses
// then (Tests/Consumer/run.sh checks it).
for target in package.targets where target.name != "CSystemShims" && target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
