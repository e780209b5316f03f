import Glibc

/// The bytes a connection has yet to send, as a queue of pieces: each response's head and
/// a slice of its body array. A cached body is referenced, not copied, however many
/// pipelined answers carry it; pieces go out together through one `sendmsg(2)` (`OutboundQueue+Send.swift`).
///
/// Confined to its connection's queue, like the connection's other state.
struct OutboundQueue {
    /// Most pieces handed to one `sendmsg` (well under `IOV_MAX`, 1024 on Linux).
    static let maxPiecesPerSend = 64

    private var pieces: [ArraySlice<UInt8>] = []
    /// Index of the first piece not completely sent.
    private var first = 0
    /// Bytes queued and not yet taken by the kernel.
    private(set) var unsentBytes = 0

    /// Room held for pieces.
    var pieceCapacity: Int { pieces.capacity }

    /// Whether everything queued has been sent.
    var isEmpty: Bool { unsentBytes == 0 }

    /// Queues a head or any other bytes of our own.
    mutating func append(_ bytes: [UInt8]) {
        append(bytes[...])
    }

    /// Queues a slice, sharing its array's storage.
    mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        pieces.append(bytes)
        unsentBytes += bytes.count
    }

    /// Queues a serialized response: its head, then its body by reference.
    mutating func append(_ response: SerializedResponse) {
        append(response.head)
        append(response.body)
    }

    /// Gives the storage back if it has room for more than `capacity` pieces; call only
    /// when everything was sent.
    mutating func releaseStorage(above capacity: Int) {
        if pieces.capacity > capacity { removeAll() }
    }

    /// Drops everything queued (the connection is closing).
    mutating func removeAll() {
        pieces = []
        first = 0
        unsentBytes = 0
    }

    /// Runs `body` with the first pieces not yet sent (at most `maxPiecesPerSend`) as
    /// `iovec`s, each pinned while it runs: what one `sendmsg` sends.
    func withIOVectors<R>(_ body: (UnsafeMutableBufferPointer<iovec>) -> R) -> R {
        let count = min(pieces.count - first, Self.maxPiecesPerSend)
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { vectors in
            gather(from: first, to: first + count, into: vectors) { body(vectors) }
        }
    }

    /// Every byte queued, in order (what a send would put on the wire).
    var bytes: [UInt8] {
        pieces[first...].reduce(into: []) { $0.append(contentsOf: $1) }
    }

    /// Fills `vectors` with the pieces `index..<end`, each pinned while `body` runs.
    private func gather<R>(
        from index: Int, to end: Int, into vectors: UnsafeMutableBufferPointer<iovec>, _ body: () -> R
    ) -> R {
        guard index < end else { return body() }
        return pieces[index].withUnsafeBytes { bytes in
            vectors[index - first] = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            return gather(from: index + 1, to: end, into: vectors, body)
        }
    }

    /// Forgets the first `sent` bytes: the kernel took them.
    mutating func dropSent(_ sent: Int) {
        unsentBytes -= sent
        var left = sent
        while left > 0 {
            let piece = pieces[first]
            if piece.count <= left {
                left -= piece.count
                pieces[first] = []  // lets go of the body array now
                first += 1
            } else {
                pieces[first] = piece.dropFirst(left)
                left = 0
            }
        }
        if first == pieces.count {
            pieces.removeAll(keepingCapacity: pieces.capacity <= 64)
            first = 0
        } else if first >= 64 {
            pieces.removeFirst(first)
            first = 0
        }
    }
}
