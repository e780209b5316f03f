import AmodbHTTPTestSupport
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A shared cache in front (a CDN; here a real nginx with `proxy_cache`, which keeps one copy
/// per URL, and one per `Vary` value) hands every web app the copy the first request left:
/// with `*`, that copy carries `Access-Control-Allow-Origin` whoever asked first, with an
/// `Origin` or none; with a list, each origin gets its own copy (`Vary: Origin`).
@Suite(
    .enabled(if: NginxCache.executable != nil, "nginx is not installed (apt-get install nginx); skipped"),
    .timeLimit(.minutes(1)))
struct SharedCacheCORSTests {
    static let path = "/3/trending/movie/day"

    /// One request through the cache: its status, `Access-Control-Allow-Origin`, and
    /// whether nginx answered from its copy. Its blocking reads run off the cooperative
    /// threads, which the proxy in this process needs to answer nginx.
    static func get(_ port: Int, origin: String?) async throws -> (
        status: Int, allowOrigin: String?, cache: String?
    ) {
        try await offloaded { try exchange(port, origin: origin) }
    }

    private static func exchange(_ port: Int, origin: String?) throws -> (
        status: Int, allowOrigin: String?, cache: String?
    ) {
        let connection = try RawHTTPConnection(port: port)
        defer { connection.close() }
        let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
        try connection.send("GET \(path) HTTP/1.1\r\nHost: cdn.example\r\n\(originLine)Connection: close\r\n\r\n")
        guard let response = try connection.readResponse() else { throw RawHTTPError.malformed("no answer from nginx") }
        return (response.status, response.header("Access-Control-Allow-Origin"), response.header("X-Cache-Status"))
    }

    @Test func withAnyOriginTheCopyARequestWithoutOriginLeftServesEveryWebApp() async throws {
        let setup = try SandboxedProxy { $0.corsOrigins = ["*"] }
        try await withServer(setup) { setup in
            let nginx = try await NginxCache.start(in: setup.harness.port)
            defer { nginx.stop() }
            let first = try await Self.get(nginx.port, origin: nil)
            #expect(first.status == 200)
            #expect(first.cache == "MISS")
            #expect(first.allowOrigin == "*", "an answer to a request without Origin is every page's too")
            for origin in ["https://one.example", "https://two.example"] {
                let page = try await Self.get(nginx.port, origin: origin)
                #expect(page.cache == "HIT", "\(origin)")
                #expect(page.allowOrigin == "*", "\(origin) reads the copy the first request left")
            }
            #expect(setup.sandbox.totalRequestCount == 1)
        }
    }

    @Test func withAListEachOriginGetsItsOwnCopy() async throws {
        let origins = ["https://one.example", "https://two.example"]
        let setup = try SandboxedProxy { $0.corsOrigins = origins }
        try await withServer(setup) { setup in
            let nginx = try await NginxCache.start(in: setup.harness.port)
            defer { nginx.stop() }
            #expect(try await Self.get(nginx.port, origin: nil).allowOrigin == nil)
            for origin in origins + origins {
                let page = try await Self.get(nginx.port, origin: origin)
                #expect(page.status == 200)
                #expect(page.allowOrigin == origin, "never another origin's copy")
            }
            let second = try await Self.get(nginx.port, origin: origins[1])
            #expect(second.cache == "HIT", "each origin's copy is kept")
            #expect(try await Self.get(nginx.port, origin: nil).allowOrigin == nil)
            let refused = try await Self.get(nginx.port, origin: "https://evil.example")
            #expect(refused.status == 403, "refused, and never a listed origin's copy")
            #expect(refused.cache != "HIT")
        }
    }
}

/// A real nginx with `proxy_cache` in front of a proxy, in a directory of its own, as a
/// CDN or a reverse proxy would be: it keeps what `Cache-Control` allows, honours `Vary`,
/// and says in `X-Cache-Status` whether it answered from its copy.
final class NginxCache: Sendable {
    static let executable = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    let port: Int
    private let process: ChildProcess
    private let directory: URL

    private init(port: Int, process: ChildProcess, directory: URL) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    /// nginx on a free port, caching what the proxy on `upstream` answers.
    static func start(in upstream: Int) async throws -> NginxCache {
        guard let executable else { throw RawHTTPError.malformed("nginx is not installed") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "amodb-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("cache"), withIntermediateDirectories: true)
        var lastFailure = ""
        for _ in 0..<20 {
            let port = Int.random(in: 20_000..<32_000)  // below Linux's ephemeral range
            let configuration = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(directory.path)/nginx.pid;
                error_log \(directory.path)/error.log warn;
                events { worker_connections 64; }
                http {
                    access_log off;
                    client_body_temp_path \(directory.path)/body;
                    proxy_temp_path \(directory.path)/proxy;
                    fastcgi_temp_path \(directory.path)/fastcgi;
                    uwsgi_temp_path \(directory.path)/uwsgi;
                    scgi_temp_path \(directory.path)/scgi;
                    proxy_cache_path \(directory.path)/cache keys_zone=shared:1m;
                    server {
                        listen 127.0.0.1:\(port);
                        location / {
                            proxy_pass http://127.0.0.1:\(upstream);
                            proxy_cache shared;
                            proxy_http_version 1.1;
                            add_header X-Cache-Status $upstream_cache_status always;
                        }
                    }
                }
                """
            let file = directory.appendingPathComponent("nginx.conf")
            try Data(configuration.utf8).write(to: file)
            let process = try ChildProcess(
                executable, ["-p", directory.path, "-c", file.path, "-e", directory.path + "/error.log"],
                environment: [:])
            let cache = NginxCache(port: port, process: process, directory: directory)
            if await eventually(within: 10, { (try? RawHTTPConnection(port: port, timeout: 1)) != nil }) {
                return cache
            }
            cache.stop()
            lastFailure =
                (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            if !lastFailure.contains("Address already in use") { break }
        }
        try? FileManager.default.removeItem(at: directory)
        Issue.record("nginx did not start: \(lastFailure)")
        throw RawHTTPError.malformed("nginx did not start")
    }

    func stop() {
        process.terminate()
        _ = process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
