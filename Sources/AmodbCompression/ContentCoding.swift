/// A content coding the proxy can send (RFC 9110 §8.4.1): the bytes as stored, or
/// compressed once per stored answer with gzip or brotli.
public enum ContentCoding: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No coding: the bytes as amodb sent them.
    case identity
    /// gzip (RFC 1952): what every HTTP client decodes.
    case gzip
    /// Brotli (RFC 7932): smaller than gzip for JSON; URLSession and browsers decode it.
    case br

    /// The `Content-Encoding` field value for this coding, or `nil` for identity, which
    /// is sent without the field (RFC 9110 §8.4: identity is never named there).
    public var contentEncoding: String? {
        switch self {
        case .identity: nil
        case .gzip: "gzip"
        case .br: "br"
        }
    }

    /// The coding's name as a log field or metric label: `identity`, `gzip`, `br`.
    public var description: String { rawValue }

    /// The order to prefer codings the client accepts equally: br, then gzip, then
    /// identity, as the smaller answer wins when the client does not mind.
    static let preferenceOrder: [ContentCoding] = [.br, .gzip, .identity]
}
