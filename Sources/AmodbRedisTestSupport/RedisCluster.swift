package import AmodbRedis
public import AmodbTestSupport
import Foundation
import Synchronization

/// A real Redis Cluster for tests: `redis-server` nodes started with `cluster-enabled`, each
/// in its own directory (where its `nodes.conf` outlives a kill), joined by
/// `redis-cli --cluster create`; then faults and changes made to it (a master killed, a
/// manual failover, a slot migrated by hand or by `redis-cli --cluster reshard`), each
/// returning only once every running node agrees on the result.
///
/// "Agrees" (`waitUntilStable`): every running node reports `cluster_state:ok` with all
/// 16384 slots ok; their `CLUSTER NODES` views are the same for the running nodes (role,
/// master, slots), flag none of them failing, show no slot importing or migrating, and give
/// every slot to a running master; and every running replica's link to its master is up.
///
/// Admin commands go to one node at a time with a plain `RedisClient` (one connection per
/// node, kept until `shutdown`); MOVED and ASK replies are the caller's to see, not followed.
package final class RedisCluster: Sendable {
    /// Why the cluster could not be started, or a change did not settle.
    package struct ClusterError: Error, CustomStringConvertible {
        /// What went wrong; for a wait, the last reason the cluster was not yet as wanted.
        package let description: String
    }

    /// How many hash slots a cluster has.
    package static let slotCount = 16_384

    /// Where `redis-cli` is, if installed.
    package static let cliExecutable: String? = [
        "/usr/bin/redis-cli", "/usr/local/bin/redis-cli", "/opt/homebrew/bin/redis-cli",
    ]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether the tests that need a cluster can run here (`redis-server` and `redis-cli`).
    package static var isInstalled: Bool { RedisServer.isInstalled && cliExecutable != nil }

    /// The message a suite shows when it is skipped for want of the binaries.
    package static let notInstalledMessage =
        "redis-server or redis-cli is not installed (apt-get install redis-server redis-tools); cluster tests skipped"

    /// Every node, in the order started; `redis-cli --cluster create` made the first
    /// `masters` of them masters, but roles change: ask `master(ofSlot:)`, `replica(of:)`.
    package let nodes: [RedisServer]
    /// The `requirepass` (and `masterauth`) of every node, if any.
    package let password: String?
    /// How every node speaks TLS (clients, replication and the cluster bus); `nil`: plain text.
    package let tls: RedisServerTLS?
    /// `cluster-node-timeout`: how long a node may be unreachable before it is suspected.
    package let nodeTimeout: Duration
    /// How long `start` took, from the first node launched to the cluster agreed.
    package var startDuration: Duration { started.withLock { $0 } }
    private let started = Mutex<Duration>(.zero)
    /// Each node's cluster id (`CLUSTER MYID`), by port; ids persist in `nodes.conf` across restarts.
    private let ids: [Int: String]
    /// One admin client per node, by port, made on first use.
    private let clients = Mutex<[Int: RedisClient]>([:])

    private init(
        nodes: [RedisServer], ids: [Int: String], password: String?, tls: RedisServerTLS?, nodeTimeout: Duration
    ) {
        self.nodes = nodes
        self.ids = ids
        self.password = password
        self.tls = tls
        self.nodeTimeout = nodeTimeout
    }

    /// Starts `masters × (1 + replicasPerMaster)` nodes, joins them into one cluster with
    /// `redis-cli --cluster create`, and returns once every node agrees that every slot is
    /// served and each master has its replicas, synchronised. `masters` must be at least 3
    /// (`redis-cli` refuses fewer).
    package static func start(
        masters: Int = 3, replicasPerMaster: Int = 1, password: String? = nil, tls: RedisServerTLS? = nil,
        nodeTimeout: Duration = .milliseconds(2000)
    ) async throws -> RedisCluster {
        precondition(masters >= 3, "redis-cli --cluster create needs at least 3 masters")
        precondition(replicasPerMaster >= 0)
        guard let cli = cliExecutable else { throw ClusterError(description: notInstalledMessage) }
        let clock = ContinuousClock()
        let began = clock.now
        var settings = [
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", String(milliseconds(nodeTimeout)),
            // A master waits 5 s by default before a diskless full sync, for more replicas to
            // join it: every replica attaching (at creation, after a restart) would wait too.
            "--repl-diskless-sync-delay", "0",
            // A replica whose master link has been down long (a loaded machine, a paused
            // node) may still be promoted: a test's failover must not depend on the clock.
            "--cluster-replica-validity-factor", "0",
        ]
        if let password { settings += ["--masterauth", password] }
        if tls != nil { settings += ["--tls-cluster", "yes", "--tls-replication", "yes"] }
        let count = masters * (1 + replicasPerMaster)
        let nodes = try await startNodes(count: count, password: password, tls: tls, settings: settings)
        do {
            var arguments = ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
            arguments += ["--cluster-replicas", String(replicasPerMaster), "--cluster-yes"]
            try await runCLI(cli, arguments, password: password, tls: tls)
            var ids: [Int: String] = [:]
            for node in nodes {
                let reply = try await command(["CLUSTER", "MYID"], on: node, client: nil)
                guard let id = reply.string, !id.isEmpty else {
                    throw ClusterError(description: "CLUSTER MYID on \(node.port) answered \(reply)")
                }
                ids[node.port] = id
            }
            let cluster = RedisCluster(nodes: nodes, ids: ids, password: password, tls: tls, nodeTimeout: nodeTimeout)
            do {
                try await cluster.waitUntilStable(within: 60, what: "the new cluster to form") { snapshot in
                    let masterIDs = snapshot.masters
                    guard masterIDs.count == masters else { return "\(masterIDs.count) masters, not \(masters)" }
                    for master in masterIDs where snapshot.replicas(of: master).count != replicasPerMaster {
                        return "master \(master) has \(snapshot.replicas(of: master).count) replicas"
                    }
                    return nil
                }
            } catch {
                await cluster.closeClients()
                throw error
            }
            cluster.started.withLock { $0 = clock.now - began }
            return cluster
        } catch {
            await withTaskGroup(of: Void.self) { group in
                for node in nodes { group.addTask { await node.shutdown() } }
            }
            throw error
        }
    }

    /// Starts `count` nodes at once, each with its own directory; stops those started if one fails.
    private static func startNodes(
        count: Int, password: String?, tls: RedisServerTLS?, settings: [String]
    ) async throws -> [RedisServer] {
        // The cluster bus listens on the port plus 10000: ports below 22000 keep it below
        // Linux's ephemeral range (32768–60999), where an outgoing connection could hold it.
        // A taken bus port fails the start like a taken port, and `RedisServer` tries another.
        let ports = 20_000..<22_000
        var started: [Int: RedisServer] = [:]
        var failure: (any Error)?
        await withTaskGroup(of: (Int, Result<RedisServer, any Error>).self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        return (
                            index,
                            .success(
                                try await RedisServer.start(
                                    password: password, tls: tls, arguments: settings, ports: ports))
                        )
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            for await (index, result) in group {
                switch result {
                case .success(let node): started[index] = node
                case .failure(let error): failure = failure ?? error
                }
            }
        }
        if let failure {
            for node in started.values { await node.shutdown() }
            throw failure
        }
        return (0..<count).map { started[$0]! }
    }

    /// An endpoint for node 0 (password and TLS as the nodes have them): where a
    /// cluster-aware client starts.
    package var seedEndpoint: RedisEndpoint { nodes[0].endpoint }

    /// The nodes running now (not stopped by `killMaster` or `stop`).
    package var runningNodes: [RedisServer] { nodes.filter(\.isRunning) }

    /// The cluster id of `node` (stable across restarts: it is kept in `nodes.conf`).
    package func id(of node: RedisServer) -> String {
        guard let id = ids[node.port] else { preconditionFailure("port \(node.port) is not a node of this cluster") }
        return id
    }

    /// The node with cluster id `id`, if it is one of these.
    package func node(withID id: String) -> RedisServer? {
        nodes.first { ids[$0.port] == id }
    }

    // MARK: Slots

    /// The slots `node` serves, as the first running node sees it, lowest first.
    package func slots(of node: RedisServer) async throws -> [Int] {
        try await view(of: try firstRunning()).slots(of: id(of: node)).sorted()
    }

    /// The master serving `slot`, as the first running node sees it.
    package func master(ofSlot slot: Int) async throws -> RedisServer {
        let view = try await view(of: try firstRunning())
        guard let owner = view.owner(ofSlot: slot), let node = node(withID: owner) else {
            throw ClusterError(description: "no node serves slot \(slot)")
        }
        return node
    }

    /// A running replica of `master`, as the master sees it.
    package func replica(of master: RedisServer) async throws -> RedisServer {
        guard let replica = try await replicas(of: master).first else {
            throw ClusterError(description: "master \(master.port) has no running replica")
        }
        return replica
    }

    /// The running replicas of `master`, as the master sees it.
    package func replicas(of master: RedisServer) async throws -> [RedisServer] {
        let view = try await view(of: master)
        return view.replicas(of: id(of: master)).compactMap(node(withID:)).filter(\.isRunning)
    }

    /// The running masters, as the first running node sees them.
    package func masters() async throws -> [RedisServer] {
        let view = try await view(of: try firstRunning())
        return view.masters.compactMap(node(withID:)).filter(\.isRunning)
    }

    // MARK: Faults and changes

    /// Kills (SIGKILL) the master of `slot` and returns once the cluster has promoted one of
    /// its replicas: every running node agrees the promoted node serves the slot. `elapsed`
    /// is from the kill to that agreement (detection, election, gossip).
    @discardableResult
    package func killMaster(ofSlot slot: Int) async throws -> (
        killed: RedisServer, promoted: RedisServer, elapsed: Duration
    ) {
        let master = try await master(ofSlot: slot)
        let replicaIDs = Set(try await replicas(of: master).map(id(of:)))
        guard !replicaIDs.isEmpty else {
            throw ClusterError(description: "master \(master.port) of slot \(slot) has no replica to promote")
        }
        let clock = ContinuousClock()
        let killed = clock.now
        await master.stop()
        try await waitUntilStable(within: 60, what: "a replica of \(master.port) to take slot \(slot)") { snapshot in
            guard let owner = snapshot.owner(ofSlot: slot), replicaIDs.contains(owner) else {
                return "slot \(slot) is served by \(snapshot.owner(ofSlot: slot) ?? "nobody")"
            }
            return nil
        }
        let promoted = try await self.master(ofSlot: slot)
        return (master, promoted, clock.now - killed)
    }

    /// A manual failover (`CLUSTER FAILOVER` on a replica of `slot`'s master): the replica
    /// takes over and the old master, alive, becomes its replica. Returns once every node
    /// agrees, with the time that took.
    @discardableResult
    package func failover(ofSlot slot: Int) async throws -> (
        oldMaster: RedisServer, newMaster: RedisServer, elapsed: Duration
    ) {
        let master = try await master(ofSlot: slot)
        let replica = try await replica(of: master)
        let clock = ContinuousClock()
        let began = clock.now
        // A manual failover gives up after 5 s (CLUSTER_MF_TIMEOUT) if the master cannot
        // pause its clients and catch the replica up in time, as a loaded machine may not:
        // it is asked again, a few times, rather than the wait failing.
        var lastError: (any Error)?
        for attempt in 0..<4 {
            if attempt == 0 {
                try await send(["CLUSTER", "FAILOVER"], to: replica)
            } else {
                // It may have completed just after the last wait gave up (then the replica,
                // a master now, refuses): the wait below tells.
                _ = try? await send(["CLUSTER", "FAILOVER"], to: replica)
            }
            do {
                try await waitUntilStable(within: 15, what: "\(replica.port) to take over from \(master.port)") {
                    snapshot in
                    guard snapshot.owner(ofSlot: slot) == self.id(of: replica) else {
                        return "slot \(slot) is served by \(snapshot.owner(ofSlot: slot) ?? "nobody")"
                    }
                    guard snapshot.masterID(of: self.id(of: master)) == self.id(of: replica) else {
                        return "\(master.port) is not yet a replica of \(replica.port)"
                    }
                    return nil
                }
                return (master, replica, clock.now - began)
            } catch let error as ClusterError {
                lastError = error
            }
        }
        throw lastError ?? ClusterError(description: "manual failover did not happen")
    }

    /// Moves `slot` to `target` (a master) by hand, as `redis-cli --cluster reshard` does:
    /// the target imports it, the source migrates it, its keys move `keysPerStep` at a time
    /// by `MIGRATE` with `pauseBetweenSteps` after each step (a test's traffic meets ASK
    /// redirections meanwhile), then every master is told the target owns it. Returns once
    /// every node agrees. `afterStep` runs after each step with the keys it moved, before the
    /// pause: a test can ask for one of them then and be sure to meet `ASK`, however few
    /// commands its traffic manages on a busy machine.
    package func migrate(
        slot: Int, to target: RedisServer, keysPerStep: Int = 1, pauseBetweenSteps: Duration = .zero,
        afterStep: (_ moved: [String]) async throws -> Void = { _ in }
    ) async throws {
        precondition(keysPerStep > 0)
        let source = try await master(ofSlot: slot)
        guard source.port != target.port else { return }
        let sourceID = id(of: source)
        let targetID = id(of: target)
        // Importing first: a client redirected by ASK must find the target ready.
        try await expectOK(["CLUSTER", "SETSLOT", .bulk(String(slot)), "IMPORTING", .bulk(sourceID)], on: target)
        try await expectOK(["CLUSTER", "SETSLOT", .bulk(String(slot)), "MIGRATING", .bulk(targetID)], on: source)
        while true {
            let reply = try await send(
                ["CLUSTER", "GETKEYSINSLOT", .bulk(String(slot)), .bulk(String(keysPerStep))], to: source)
            let keys = (reply.array ?? []).compactMap(\.bytes)
            if keys.isEmpty { break }
            var migrate: [RedisValue] = [
                "MIGRATE", "127.0.0.1", .bulk(String(target.port)), "", "0", .bulk(String(Self.migrateTimeout)),
            ]
            if let password { migrate += ["AUTH", .bulk(password)] }
            migrate += ["KEYS"] + keys.map(RedisValue.bulkString)
            let answer = try await send(migrate, to: source)
            guard answer.string == "OK" || answer.string == "NOKEY" else {
                throw ClusterError(description: "MIGRATE of slot \(slot) answered \(answer)")
            }
            try await afterStep(keys.map { String(decoding: $0, as: UTF8.self) })
            if pauseBetweenSteps > .zero { try await Task.sleep(for: pauseBetweenSteps) }
        }
        // The target first (it then answers for the slot without ASK), the source next (it
        // then redirects with MOVED), then every other master, so that no epoch race
        // leaves the slot with the source.
        try await expectOK(["CLUSTER", "SETSLOT", .bulk(String(slot)), "NODE", .bulk(targetID)], on: target)
        try await expectOK(["CLUSTER", "SETSLOT", .bulk(String(slot)), "NODE", .bulk(targetID)], on: source)
        for master in try await masters() where master.port != source.port && master.port != target.port {
            try await expectOK(["CLUSTER", "SETSLOT", .bulk(String(slot)), "NODE", .bulk(targetID)], on: master)
        }
        try await waitUntilStable(within: 60, what: "slot \(slot) to move to \(target.port)") { snapshot in
            snapshot.owner(ofSlot: slot) == targetID
                ? nil : "slot \(slot) is served by \(snapshot.owner(ofSlot: slot) ?? "nobody")"
        }
    }

    /// Moves `slots` slots from `source` to `target` (both masters) with the real
    /// `redis-cli --cluster reshard`, and returns once every node agrees. Returns the slots moved.
    @discardableResult
    package func reshardWithRedisCLI(from source: RedisServer, to target: RedisServer, slots: Int) async throws
        -> [Int]
    {
        guard let cli = Self.cliExecutable else { throw ClusterError(description: Self.notInstalledMessage) }
        // redis-cli checks the cluster first and refuses while nodes disagree.
        try await waitUntilStable(within: 60, what: "the cluster to agree before a reshard") { _ in nil }
        let before = Set(try await view(of: source).slots(of: id(of: source)))
        try await Self.runCLI(
            cli,
            [
                "--cluster", "reshard", "127.0.0.1:\(source.port)", "--cluster-from", id(of: source), "--cluster-to",
                id(of: target), "--cluster-slots", String(slots), "--cluster-yes",
            ], password: password, tls: tls)
        let targetID = id(of: target)
        var moved: [Int] = []
        try await waitUntilStable(within: 60, what: "\(slots) slots to move to \(target.port)") { snapshot in
            moved = before.filter { snapshot.owner(ofSlot: $0) == targetID }.sorted()
            return moved.count == slots ? nil : "\(moved.count) of \(slots) slots moved"
        }
        return moved
    }

    /// Starts a stopped node again on its port and directory, and returns once the cluster
    /// agrees: with its `nodes.conf` it rejoins under its old id, and an old master whose
    /// slots were taken over becomes a replica of the node that took them.
    package func restart(_ node: RedisServer) async throws {
        try await node.restart()
        let nodeID = id(of: node)
        try await waitUntilStable(within: 60, what: "\(node.port) to rejoin") { snapshot in
            snapshot.knows(nodeID) ? nil : "\(node.port) not yet seen by every node"
        }
    }

    /// Stops one node (SIGKILL) without waiting for the cluster to react.
    package func stop(_ node: RedisServer) async {
        await node.stop()
    }

    /// Waits until every running node agrees on the cluster (see the type's comment) and
    /// `condition` holds on that agreed picture (it returns why not, or nil); throws with
    /// the last reason after `seconds`.
    package func waitUntilStable(
        within seconds: Double = 60, what: String = "the cluster to agree",
        _ condition: (ClusterSnapshot) -> String? = { _ in nil }
    ) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        var pause = Duration.milliseconds(20)
        var reason = "not checked"
        while true {
            do {
                let snapshot = try await agreedSnapshot()
                if let why = condition(snapshot) { reason = why } else { return }
            } catch let error as ClusterError {
                reason = error.description
            } catch {
                reason = "\(error)"
            }
            if clock.now >= deadline { break }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(200))
        }
        throw ClusterError(description: "waited \(seconds) s for \(what): \(reason)")
    }

    /// Sends one command to `node` (a plain client, no redirection followed) and returns
    /// its reply; an error reply throws.
    @discardableResult
    package func send(_ command: [RedisValue], to node: RedisServer) async throws -> RedisValue {
        try await Self.command(command, on: node, client: client(for: node))
    }

    /// Stops every node and removes their directories.
    package func shutdown() async {
        await closeClients()
        await withTaskGroup(of: Void.self) { group in
            for node in nodes { group.addTask { await node.shutdown() } }
        }
    }

    // MARK: Agreement

    /// Every running node's picture, checked to be the same and settled; throws why not.
    private func agreedSnapshot() async throws -> ClusterSnapshot {
        let running = runningNodes
        guard !running.isEmpty else { throw ClusterError(description: "no node runs") }
        let runningIDs = Set(running.map(id(of:)))
        var agreed: ClusterSnapshot?
        for node in running {
            let info = try await send(["CLUSTER", "INFO"], to: node).string ?? ""
            let fields = Self.fields(info)
            guard fields["cluster_state"] == "ok" else {
                throw ClusterError(description: "\(node.port) says cluster_state:\(fields["cluster_state"] ?? "?")")
            }
            guard fields["cluster_slots_ok"] == String(Self.slotCount) else {
                throw ClusterError(description: "\(node.port) has \(fields["cluster_slots_ok"] ?? "?") slots ok")
            }
            let view = try await view(of: node)
            if let problem = view.problem(running: runningIDs) {
                throw ClusterError(description: "\(node.port) sees \(problem)")
            }
            let snapshot = view.restricted(to: runningIDs)
            if let agreed, agreed != snapshot {
                throw ClusterError(description: "\(node.port) disagrees with \(running[0].port)")
            }
            agreed = snapshot
            if snapshot.masterID(of: id(of: node)) != nil {
                let replication = Self.fields(try await send(["INFO", "replication"], to: node).string ?? "")
                guard replication["master_link_status"] == "up" else {
                    throw ClusterError(description: "replica \(node.port)'s master link is not up")
                }
            }
        }
        return agreed!
    }

    /// `CLUSTER NODES` as `node` answers it.
    private func view(of node: RedisServer) async throws -> ClusterView {
        let reply = try await send(["CLUSTER", "NODES"], to: node)
        guard let text = reply.string else { throw ClusterError(description: "CLUSTER NODES answered \(reply)") }
        return ClusterView(text)
    }

    private func firstRunning() throws -> RedisServer {
        guard let node = nodes.first(where: \.isRunning) else { throw ClusterError(description: "no node runs") }
        return node
    }

    /// `key:value` lines (`CLUSTER INFO`, `INFO`).
    private static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = String(line[line.index(after: colon)...])
        }
        return fields
    }

    // MARK: Clients and redis-cli

    /// How long `MIGRATE` may take per step, in milliseconds (as `redis-cli`'s default).
    private static let migrateTimeout = 60_000

    private func client(for node: RedisServer) -> RedisClient {
        clients.withLock { clients in
            if let client = clients[node.port] { return client }
            let client = Self.makeClient(for: node)
            clients[node.port] = client
            return client
        }
    }

    private func closeClients() async {
        let all = clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { await client.shutdown() }
    }

    /// A single-connection client with timeouts long enough for `MIGRATE` on a loaded machine,
    /// and the test's client certificate when the nodes demand one.
    private static func makeClient(for node: RedisServer) -> RedisClient {
        var configuration = node.configuration(commandTimeout: .seconds(70))
        configuration.connectionCount = 1
        if let tls = node.tls, tls.requireClientCertificate {
            configuration.tls.certificateFile = tls.served.certificate
            configuration.tls.keyFile = tls.served.key
        }
        return RedisClient(configuration: configuration)
    }

    /// Sends `command` with `client`, or with a client made for this one command.
    private static func command(_ command: [RedisValue], on node: RedisServer, client: RedisClient?) async throws
        -> RedisValue
    {
        let used = client ?? makeClient(for: node)
        do {
            let reply = try await used.send(command)
            if client == nil { await used.shutdown() }
            return reply
        } catch {
            if client == nil { await used.shutdown() }
            let word = command.prefix(2).compactMap(\.string).joined(separator: " ")
            throw ClusterError(description: "\(word) on \(node.port): \(error)")
        }
    }

    private func expectOK(_ command: [RedisValue], on node: RedisServer) async throws {
        let reply = try await send(command, to: node)
        guard reply.string == "OK" else {
            let words = command.prefix(4).compactMap(\.string).joined(separator: " ")
            throw ClusterError(description: "\(words) on \(node.port) answered \(reply)")
        }
    }

    /// Runs `redis-cli` with the nodes' password and TLS settings; throws with its output unless it exits 0.
    private static func runCLI(_ cli: String, _ arguments: [String], password: String?, tls: RedisServerTLS?)
        async throws
    {
        var leading: [String] = []
        if let password { leading += ["-a", password, "--no-auth-warning"] }
        if let tls {
            leading += ["--tls", "--cacert", tls.authority.certificate]
            if tls.requireClientCertificate { leading += ["--cert", tls.served.certificate, "--key", tls.served.key] }
        }
        let child = try ChildProcess(
            cli, leading + arguments, environment: ProcessInfo.processInfo.environment, standardOutput: .pipe,
            standardError: .standardOutput)
        let termination = try await offloaded { child.waitUntilExit() }
        let output = String(decoding: child.standardOutput?.readToEnd() ?? [], as: UTF8.self)
        // redis-cli exits 0 from some failures, so its own error lines count too.
        guard termination == .exited(0), !output.contains("[ERR]") else {
            throw ClusterError(
                description: "redis-cli \(arguments.prefix(2).joined(separator: " ")) failed (\(termination)): "
                    + output.suffix(600))
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

/// The cluster as one node's `CLUSTER NODES` shows it, restricted to the running nodes:
/// each node's role, master and slots. Equal snapshots from every node mean they agree.
package struct ClusterSnapshot: Sendable, Equatable {
    /// One node's line.
    struct Node: Sendable, Equatable {
        var isMaster: Bool
        var masterID: String?
        /// The slots it serves, as the sorted ranges of its line.
        var slots: [ClosedRange<Int>]
    }

    /// By node id.
    var nodes: [String: Node]

    /// The id of the master serving `slot`, if any.
    package func owner(ofSlot slot: Int) -> String? {
        nodes.first { $0.value.slots.contains { $0.contains(slot) } }?.key
    }

    /// The ids of the masters, sorted.
    package var masters: [String] { nodes.filter(\.value.isMaster).keys.sorted() }

    /// The ids of the replicas of master `id`, sorted.
    package func replicas(of id: String) -> [String] {
        nodes.filter { $0.value.masterID == id }.keys.sorted()
    }

    /// The master of replica `id`; nil for a master or an unknown node.
    package func masterID(of id: String) -> String? { nodes[id]?.masterID }

    /// The slots master `id` serves, in order.
    package func slots(of id: String) -> [Int] { (nodes[id]?.slots ?? []).flatMap { Array($0) } }

    /// Whether the snapshot holds node `id`.
    package func knows(_ id: String) -> Bool { nodes[id] != nil }
}

/// One node's `CLUSTER NODES` reply, parsed:
/// `<id> <ip:port@bus> <flags> <master|-> <ping> <pong> <epoch> <link> <slot or range>…`,
/// where a `[slot->-id]` or `[slot-<-id]` entry is a slot migrating or importing.
struct ClusterView {
    struct Line {
        var id: String
        var flags: Set<String>
        var masterID: String?
        var slots: [ClosedRange<Int>]
        var openSlots: [String]
    }

    var lines: [Line] = []

    init(_ text: String) {
        for row in text.split(whereSeparator: \.isNewline) {
            let words = row.split(separator: " ").map(String.init)
            guard words.count >= 8 else { continue }
            var line = Line(
                id: words[0], flags: Set(words[2].split(separator: ",").map(String.init)),
                masterID: words[3] == "-" ? nil : words[3], slots: [], openSlots: [])
            for word in words.dropFirst(8) {
                if word.hasPrefix("[") {
                    line.openSlots.append(word)
                } else if let dash = word.firstIndex(of: "-"), let low = Int(word[..<dash]),
                    let high = Int(word[word.index(after: dash)...])
                {
                    line.slots.append(low...high)
                } else if let single = Int(word) {
                    line.slots.append(single...single)
                }
            }
            line.slots.sort { $0.lowerBound < $1.lowerBound }
            lines.append(line)
        }
    }

    /// The master serving `slot`, if any.
    func owner(ofSlot slot: Int) -> String? {
        lines.first { $0.slots.contains { $0.contains(slot) } }?.id
    }

    /// The masters' ids (failed or not).
    var masters: [String] { lines.filter { $0.flags.contains("master") }.map(\.id) }

    /// The replicas of master `id`.
    func replicas(of id: String) -> [String] { lines.filter { $0.masterID == id }.map(\.id) }

    /// The slots master `id` serves.
    func slots(of id: String) -> [Int] { (lines.first { $0.id == id }?.slots ?? []).flatMap { Array($0) } }

    /// Why this view is not settled for `running` nodes, or nil: a running node missing or
    /// flagged failing, a slot open, a slot unserved, served twice or by a node not running.
    func problem(running: Set<String>) -> String? {
        let known = Set(lines.map(\.id))
        if let missing = running.subtracting(known).first { return "no line for \(missing)" }
        var served = 0
        for line in lines {
            if let open = line.openSlots.first { return "slot \(open) open on \(line.id)" }
            if running.contains(line.id) {
                let bad = line.flags.intersection(["fail", "fail?", "handshake", "noaddr"])
                if !bad.isEmpty { return "\(line.id) flagged \(bad.sorted().joined(separator: ","))" }
            }
            guard !line.slots.isEmpty else { continue }
            if !running.contains(line.id) { return "slots served by \(line.id), which is not running" }
            if !line.flags.contains("master") { return "slots served by \(line.id), which is not a master" }
            served += line.slots.reduce(0) { $0 + $1.count }
        }
        // Ranges never overlap in a reply, so the sum counts each slot once.
        return served == RedisCluster.slotCount ? nil : "\(served) slots served"
    }

    /// The running nodes' part, with no trace of which node answered (`myself`).
    func restricted(to running: Set<String>) -> ClusterSnapshot {
        var nodes: [String: ClusterSnapshot.Node] = [:]
        for line in lines where running.contains(line.id) {
            nodes[line.id] = ClusterSnapshot.Node(
                isMaster: line.flags.contains("master"), masterID: line.masterID, slots: line.slots)
        }
        return ClusterSnapshot(nodes: nodes)
    }
}

extension RedisCluster: ScopedServer {}

/// Runs `body` with a fresh cluster and stops every node afterwards, whether `body` returns or throws.
@discardableResult
package func withRedisCluster<Result>(
    masters: Int = 3, replicasPerMaster: Int = 1, password: String? = nil, tls: RedisServerTLS? = nil,
    nodeTimeout: Duration = .milliseconds(2000), _ body: (RedisCluster) async throws -> Result
) async throws -> Result {
    try await withServer(
        try await RedisCluster.start(
            masters: masters, replicasPerMaster: replicasPerMaster, password: password, tls: tls,
            nodeTimeout: nodeTimeout),
        body)
}
