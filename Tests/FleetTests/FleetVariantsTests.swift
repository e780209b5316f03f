import AmodbCompression
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import CZlib
import Testing

@testable import AmodbProxy

/// An answer is compressed once for the fleet: the replica that fills it makes its variants
/// and stores them in Redis with it; a replica that reads the envelope serves them at once,
/// with the same tags, and compresses nothing. Variants in Redis are trusted no more than
/// bodies, and an envelope written by an earlier version is refused.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct FleetVariantsTests {
    static let path = "/3/movie/550"
    static let key = "/movie/550"

    /// The envelope in Redis under `key`, decoded (`nil`: none, or unreadable).
    /// `transport`: how the fleet's keys are named (in braces on a cluster).
    static func stored(_ server: RedisServer, key: String = key, transport: RedisTransport = .plain) async throws
        -> CachedResponse?
    {
        let value = try await withRedisClient(server.configuration()) {
            try await $0.get(transport.keyPrefix + "cache:" + key)
        }
        return value.flatMap { try? CacheEnvelope.decode($0, key: key).get() }
    }

    /// What the replica's variant queue did, from its `/metrics`: jobs of any result, and bytes compressed.
    static func compressionWork(_ replica: ProxyHarness) async throws -> (jobs: Double, bytes: Double) {
        let metrics = try await replica.metrics()
        return (
            try metrics.value("amodb_proxy_variant_jobs_total"),
            try metrics.value("amodb_proxy_variant_compressed_bytes_total")
        )
    }

    /// A body gzipped by the fill itself (its br follows on the queue), and one too long for
    /// that (both codings follow on the queue): either way the fleet gets both.
    @Test(
        arguments: [(20_000, .plain), (200_000, .plain)]
            + (RedisTransport.available.contains(.cluster) ? [(20_000, RedisTransport.cluster)] : []))
    func aReplicaServesTheVariantsTheFillingReplicaMadeAtOnceAndCompressesNothing(
        bytes: Int, transport: RedisTransport
    ) async throws {
        let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: bytes)
        let upstream = ScriptedUpstream(fallback: .response(UpstreamResponse(status: 200, body: body)))
        try await withFleet(2, upstream: upstream, transport: transport) {
            (fleet: Fleet, server: RedisServer) async throws in
            let filler = fleet[0]
            #expect(try await filler.get(Self.path).status == 200)
            #expect(await eventually { filler.proxy.variantCompressions == 1 })
            // The variants made after the fill was shared reach Redis too.
            #expect(
                try await eventually {
                    try await Self.stored(server, transport: transport)?.variants?.available == .all
                })

            let codings: [(accept: String, coding: ContentCoding)] = [
                ("br", .br), ("gzip", .gzip), ("identity", .identity),
            ]
            let reader = fleet[1]
            for (accept, coding) in codings {
                let made = try await filler.get(Self.path, headers: ["Accept-Encoding": accept])
                // The reader's first answer is a miss read from Redis: already in br.
                let read = try await reader.get(Self.path, headers: ["Accept-Encoding": accept])
                #expect(made.header("Content-Encoding") == coding.contentEncoding)
                #expect(read.header("Content-Encoding") == coding.contentEncoding, "\(accept)")
                #expect(read.header("ETag") == made.header("ETag"), "\(accept)")
                // Compared as one Bool: a failure does not print two bodies byte by byte.
                let sameBytes = read.body == made.body
                #expect(sameBytes, "\(accept)")
                let decodesToBody =
                    (try? ContentDecoder(maximumOutputSize: body.count).decode(read.body, from: coding)) == body
                #expect(decodesToBody, "\(accept)")
            }
            #expect(upstream.calls == [Self.key])
            #expect(reader.proxy.variantCompressions == 0)
            let work = try await Self.compressionWork(reader)
            #expect(work.jobs == 0, "the reader's variant queue had no job")
            #expect(work.bytes == 0, "the reader compressed nothing")
        }
    }

    /// Bytes as a replica of the earlier version wrote them: version 1, the body alone.
    static func earlierEnvelope(_ entry: CachedResponse) -> [UInt8] {
        func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
            stride(from: (width - 1) * 8, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
        }
        let etag = Array(entry.etag.utf8)
        return [1] + bigEndian(UInt64(entry.status), 2) + bigEndian(UInt64(entry.storedAt * 1000), 8)
            + bigEndian(UInt64(entry.lifetime * 1000), 8) + bigEndian(UInt64(etag.count), 2) + etag + entry.body
    }

    @Test func anEnvelopeOfTheEarlierFormatIsRefusedAndThePathFetchedOnce() async throws {
        try await withFleet(1) { (fleet: Fleet, server: RedisServer) async throws in
            let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 20_000)
            let entry = CachedResponse(
                body: body, storedAt: (SystemClock().now() * 1000).rounded() / 1000, lifetime: 1800)
            try await withRedisClient(server.configuration()) { redis in
                _ = try await redis.set("amodb-proxy:cache:" + Self.key, Self.earlierEnvelope(entry))
            }
            // It names no key, so it cannot prove which path it answers.
            for _ in 0..<2 { #expect(try await fleet[0].get(Self.path).status == 200) }
            #expect(fleet.upstream.calls == [Self.key])
        }
    }

    /// Each envelope carries the right body and ETag; only its variants are wrong.
    static func poisoned(_ body: [UInt8]) throws -> [(String, [UInt8])] {
        let entry = CachedResponse(body: body, storedAt: SystemClock().now(), lifetime: 1800)
        let encoder = ContentEncoder()
        var other = body
        other[other.count - 30] = UInt8(ascii: "y")  // inside the padding of the last cast member's name
        let withKey = Array(
            String(decoding: body, as: UTF8.self).replacingOccurrences(of: "Fight Club", with: ProxyHarness.key).utf8)
        let gzip = try encoder.encode(body, as: .gzip)
        var lengthsTooLarge = CacheEnvelope.encode(
            entry.with(ContentVariants(identity: body, gzip: gzip, br: nil)), key: Self.key)
        lengthsTooLarge[lengthsTooLarge.count - 6] = 0x7F  // the gzip length's third byte: 32 KiB more
        return [
            (
                "a gzip variant of another body",
                CacheEnvelope.encode(
                    entry.with(ContentVariants(identity: body, gzip: try encoder.encode(other, as: .gzip), br: nil)),
                    key: Self.key)
            ),
            (
                "a br variant holding the key",
                CacheEnvelope.encode(
                    entry.with(ContentVariants(identity: body, gzip: nil, br: try encoder.encode(withKey, as: .br))),
                    key: Self.key)
            ),
            (
                "a br variant cut short",
                CacheEnvelope.encode(
                    entry.with(
                        ContentVariants(
                            identity: body, gzip: gzip, br: Array(try encoder.encode(body, as: .br).dropLast(8)))),
                    key: Self.key)
            ),
            (
                "a variant no shorter than the body",
                CacheEnvelope.encode(entry.with(ContentVariants(identity: body, gzip: body, br: nil)), key: Self.key)
            ),
            ("variant lengths longer than the value", lengthsTooLarge),
        ]
    }

    @Test func anEnvelopeWhoseVariantsAreNotItsBodyIsRefusedAndFetched() async throws {
        let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 20_000)
        for (label, value) in try Self.poisoned(body) {
            let upstream = ScriptedUpstream(fallback: .response(UpstreamResponse(status: 200, body: body)))
            try await withFleet(1, upstream: upstream) { (fleet: Fleet, server: RedisServer) async throws in
                try await withRedisClient(server.configuration()) { redis in
                    _ = try await redis.set("amodb-proxy:cache:" + Self.key, value)
                }
                let answer = try await fleet[0].get(Self.path, headers: ["Accept-Encoding": "br, gzip"])
                #expect(answer.status == 200, "\(label)")
                #expect(upstream.calls == [Self.key], "\(label): refused, so fetched")
                #expect(!answer.text.contains(ProxyHarness.key))
                #expect(fleet.logs[0].all.contains { $0.contains("entry in redis refused") }, "\(label)")
            }
        }
    }

    /// What a client that reads one gzip member gets of `gzip` (libcurl, and zlib loops that
    /// stop at the first `Z_STREAM_END`): the first member's bytes, up to `limit`.
    static func firstMember(_ gzip: [UInt8], limit: Int) -> [UInt8]? {
        var stream = z_stream()
        guard amodb_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = gzip
        var output = [UInt8](repeating: 0, count: limit)
        let code = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return inflate(&stream, Z_FINISH)
            }
        }
        guard code == Z_STREAM_END else { return nil }
        return Array(output[..<(limit - Int(stream.avail_out))])
    }

    /// A gzip variant of two members, an empty one and then the body, is the body to gzip(1)
    /// and nothing to a client that reads one member: the replica leaves it out, serves the
    /// rest of the entry, and a gzip client gets what it reads whole.
    @Test func aGzipVariantOfTwoMembersInRedisIsNotServed() async throws {
        let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 20_000)
        let upstream = ScriptedUpstream(fallback: .response(UpstreamResponse(status: 200, body: body)))
        try await withFleet(1, upstream: upstream) { (fleet: Fleet, server: RedisServer) async throws in
            let encoder = ContentEncoder()
            let forged = try encoder.encode([], as: .gzip) + encoder.encode(body, as: .gzip)
            let entry = CachedResponse(body: body, storedAt: SystemClock().now(), lifetime: 1800)
            let envelope = CacheEnvelope.encode(
                entry.with(ContentVariants(identity: body, gzip: forged, br: nil)), key: Self.key)
            try await withRedisClient(server.configuration()) { redis in
                _ = try await redis.set("amodb-proxy:cache:" + Self.key, envelope)
            }
            let answer = try await fleet[0].get(Self.path, headers: ["Accept-Encoding": "gzip"])
            #expect(answer.status == 200)
            let coding = answer.header("Content-Encoding")
            let read = coding == "gzip" ? Self.firstMember(answer.body, limit: body.count + 1) : answer.body
            // Compared as one Bool: a failure does not print two bodies byte by byte.
            let readWhole = read == body
            #expect(
                readWhole, "Content-Encoding: \(coding ?? "none"), \(read?.count ?? -1) bytes read of \(body.count)")
            #expect(upstream.calls.isEmpty, "the entry's body was good: served from Redis, not fetched")
            #expect(fleet.logs[0].all.contains { $0.contains("variant in redis refused") })
        }
    }

    /// `shareVariants` replaces only a shorter copy of the same answer, keeps its expiry, and
    /// never touches a newer answer another replica stored meanwhile.
    @Test func variantsReplaceOnlyTheSameAnswerInRedis() async throws {
        try await withRedisServer { server in
            let link = RedisLink(
                configuration: server.configuration(), prefix: "amodb-proxy:",
                logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }), largestBody: 2 * 1024 * 1024)
            try await withRedisLink(link) { link in
                let bounds = CacheSnapshot.Bounds(ProxyConfiguration())
                let leases = RedisFetchLeases(
                    local: MemoryFetchLeases(capacity: 16), link: link,
                    rules: .init(
                        bounds: bounds, validator: AnswerValidator(key: Secret(ProxyHarness.key)), leaseSeconds: 2),
                    clock: SystemClock(), logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }))
                let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 20_000)
                let now = SystemClock().now()
                let shared = CachedResponse(body: body, storedAt: now, lifetime: 1800)
                let complete = shared.with(try ContentVariants(compressing: body))
                let newer = CachedResponse(body: body, storedAt: now + 60, lifetime: 1800)
                try await withRedisClient(server.configuration()) { redis in
                    let cacheKey = "amodb-proxy:cache:" + Self.key
                    _ = try await redis.set(
                        cacheKey, CacheEnvelope.encode(shared, key: Self.key), expiry: .milliseconds(600_000))
                    await leases.shareVariants(Self.key, complete)
                    #expect(try await redis.get(cacheKey) == CacheEnvelope.encode(complete, key: Self.key))
                    guard case .milliseconds(let left) = try await redis.pttl(cacheKey) else {
                        Issue.record("the expiry was lost")
                        return
                    }
                    #expect(left > 500_000)

                    _ = try await redis.set(
                        cacheKey, CacheEnvelope.encode(newer, key: Self.key), expiry: .milliseconds(600_000))
                    await leases.shareVariants(Self.key, complete)
                    #expect(
                        try await redis.get(cacheKey) == CacheEnvelope.encode(newer, key: Self.key),
                        "a newer answer is never replaced")

                    _ = try await redis.del([cacheKey])
                    await leases.shareVariants(Self.key, complete)
                    #expect(try await redis.get(cacheKey) == nil, "nothing is written where nothing was shared")
                }
            }
        }
    }
}
