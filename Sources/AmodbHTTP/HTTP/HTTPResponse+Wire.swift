extension HTTPResponse {
    /// The bytes a connection kept open sends for this response: its head as the serializer
    /// writes it, then its body unless `isHead`. For tests that hand a request to a
    /// responder in process and read the answer as a client would, without a socket.
    package func wireBytes(isHead: Bool) -> [UInt8] {
        let serialized = ResponseSerializer.serialize(self, isHead: isHead, closing: false, version: .http1_1)
        return Array(serialized.head) + Array(serialized.body)
    }
}
