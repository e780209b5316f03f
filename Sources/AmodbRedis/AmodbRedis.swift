// AmodbRedis: a RESP2 client of our own, for replicas of amodb-proxy that share one cache,
// one upstream budget and one in-flight lease through Redis. It knows nothing of the
// proxy: it runs commands and Lua scripts (`RedisScript`, by `EVALSHA`) that callers
// write, and reads a Redis URL without knowing which setting it came from. The proxy's
// scripts and key layout live with it (`AmodbProxy/Fleet/`); that use, in short (every key
// starts with `AMODB_REDIS_PREFIX`, default `amodb-proxy:`):
//
// - Cache envelope, `<prefix>cache:<cache key>`: one binary value, written after a fill
//   with `SET … PX` for as long as the entry may still be served stale — a version byte,
//   the key it was stored for, status, stored-at (Unix ms, so a replica that reads it keeps
//   the entry with its true age), lifetime, the ETag, the body, then its gzip and br
//   variants. The filling replica stores the envelope at once, and again with the variants
//   once they are made (only over the same answer without them, keeping its expiry), so
//   the fleet compresses each fill once and a replica that reads it compresses nothing.
//   Memory stays in front: a hit in memory never touches Redis; a miss looks in Redis
//   before asking amodb, and a new replica starts warm that way. Never stored: the amodb
//   key, client tokens, request headers.
//
// - Lease, `<prefix>lease:<cache key>`, taken in the script that first looks for a stored
//   entry or failure: `SET <key> <replica> NX PX <upstream timeout + margin>`. The holder
//   fetches, then in one script stores the envelope (or how the call failed,
//   `<prefix>outcome:<cache key>`), deletes the lease if it still holds it and `PUBLISH`es
//   the key on `<prefix>fills`. The others wait for the announcement (or look again with
//   back-off) and answer with what it stored, failures included: a herd spread over every
//   replica makes one call to amodb.
//
// - Budget: the proxy's `SharedBudget`, one Lua script over `<prefix>budget:calls` (a sorted
//   set of the window's calls, scored by Redis's own clock) and `<prefix>budget:state` (a
//   hash: the window's epoch, a sequence number, the Redis process that wrote it, a 429's
//   pause, what amodb's rate-limit headers said). The sliding 60 s window and the refresh
//   rule are the in-memory `UpstreamBudget`'s. A window lost or rolled back is detected and
//   grants nothing for a minute. The same script checks each client's share of the calls for misses,
//   `<prefix>share:<name>` (a sorted set of its calls; the name is a keyed hash of the
//   client, never its own text), in the step that takes the call; a share expires a window
//   after its client's last call.
//
// - Heartbeats, `<prefix>replicas`: one sorted set of replica ids scored by when each was
//   last seen (`ReplicaRoster`, one script per beat with bounded work; nothing is ever
//   scanned); the number of live replicas is shown, and checked against `AMODB_FLEET_SIZE`,
//   among which the outage reserve is divided.
//
// - Redis down or slow: commands time out in tens of milliseconds, and while a connection
//   backs off they fail at once (`RedisError.unavailable`), so the proxy serves from memory
//   and fetches within its share; `RedisClient.isConnected` feeds an "up" gauge. Sharing
//   resumes as soon as a reconnection succeeds, whether Redis came back empty or not.
