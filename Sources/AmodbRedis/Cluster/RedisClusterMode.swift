/// Redis Cluster, for a client whose every key carries one hash tag: all of them, and every
/// script over them, live in one slot, so the client needs only that slot's master. Its
/// connections learn where that is from the configuration endpoint (or any node seen
/// before) with `CLUSTER SHARDS` (`CLUSTER SLOTS` where the server lacks it), go there,
/// follow `MOVED` (the slot's master changed: a failover or a reshard) by re-sending the
/// command to the new master, and `ASK` (the slot is being migrated and the key has moved)
/// with `ASKING` once on a connection to the importing node.
///
/// A command whose keys are in another slot is not followed: its `MOVED` comes back as the
/// server's error, since following it would move every command of the client with it.
public struct RedisClusterMode: Sendable, Equatable, CustomStringConvertible {
    /// The tag every key carries, braces excluded.
    public let hashTag: String
    /// The slot every key with the tag belongs to.
    public let slot: Int

    /// Cluster mode for keys tagged `{hashTag}`; `nil` when the tag is empty or holds a
    /// brace (the cluster would then hash another part of the key, or all of it).
    public init?(hashTag: String) {
        guard !hashTag.isEmpty, !hashTag.contains("{"), !hashTag.contains("}") else { return nil }
        self.hashTag = hashTag
        self.slot = RedisSlot.of("{" + hashTag + "}")
    }

    /// What every key starts with: the tag in braces.
    public var keyPrefix: String { "{" + hashTag + "}" }

    public var description: String { "cluster slot \(slot) (keys \(keyPrefix)…)" }
}
