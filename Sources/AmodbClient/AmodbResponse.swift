public import AmodbModels
public import Foundation

/// One HTTP response from amodb or the proxy: status, headers and body, before any
/// interpretation. Use it to read headers such as `Cache-Status` or `Age`.
public struct AmodbResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, looked up without regard to case.
    public var headers: Headers
    /// The body as received.
    public var body: Data

    /// Makes a response, e.g. for a test.
    public init(status: Int, headers: Headers = Headers(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `true` for a 2xx status.
    public var isSuccess: Bool { (200...299).contains(status) }

    /// Decodes the body as JSON; a body that does not fit `type` is an
    /// ``AmodbClientError/Kind-swift.struct/invalidResponse`` error.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws(AmodbClientError) -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DecodingError {
            throw AmodbClientError(.invalidResponse(status: status, detail: Self.summary(of: error)))
        } catch {
            throw AmodbClientError(.invalidResponse(status: status, detail: "the body is not valid JSON"))
        }
    }

    /// amodb's (or the proxy's) JSON error body, when the body is one.
    public var errorBody: AmodbErrorBody? {
        try? JSONDecoder().decode(AmodbErrorBody.self, from: body)
    }

    /// A short account of where decoding failed, without echoing body contents.
    static func summary(of error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            let text = keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            return text.isEmpty ? "the top level" : String(text.drop(while: { $0 == "." }))
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case .valueNotFound(_, let context):
            return "\(path(context.codingPath)) is null"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) is not a \(type)"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "the body is not valid JSON" : "\(path(context.codingPath)) is invalid"
        @unknown default:
            return "the body does not have the expected shape"
        }
    }
}
