/// Which codings of one answer exist, for negotiation: a bit set, so that asking costs
/// no allocation on the hit path.
public struct ContentCodingSet: OptionSet, Sendable, Hashable {
    /// One bit per coding.
    public let rawValue: UInt8

    /// A set from its bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The set holding `coding` alone.
    public init(_ coding: ContentCoding) {
        switch coding {
        case .identity: self = .identity
        case .gzip: self = .gzip
        case .br: self = .br
        }
    }

    /// The identity bytes.
    public static let identity = ContentCodingSet(rawValue: 1 << 0)
    /// A gzip variant.
    public static let gzip = ContentCodingSet(rawValue: 1 << 1)
    /// A brotli variant.
    public static let br = ContentCodingSet(rawValue: 1 << 2)
    /// Every coding the proxy makes: what a stored answer large enough to compress has.
    public static let all: ContentCodingSet = [.identity, .gzip, .br]

    /// Whether the set holds `coding`.
    public func contains(_ coding: ContentCoding) -> Bool {
        contains(ContentCodingSet(coding))
    }
}
