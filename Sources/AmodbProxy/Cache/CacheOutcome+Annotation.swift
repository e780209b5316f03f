extension CacheOutcome {
    // Layout of the 64 bits: the case in bits 0-1 (0: no outcome), the stale reason or the
    // miss detail in bits 2-3, `stored` bit 4 (for a hit: from the shared cache), `collapsed` bit 5, `fwd-status` in bits 16-31
    // (0: none), the ttl in bits 32-63 as a signed 32-bit number (clamped: 68 years either way).
    private static let hitCase: UInt64 = 1, staleCase: UInt64 = 2, missCase: UInt64 = 3

    /// This outcome as the bits a response's `annotation` carries; never 0.
    var annotation: UInt64 {
        switch self {
        case .hit(let ttl):
            return Self.hitCase | Self.ttlBits(ttl)
        case .sharedHit(let ttl):
            return Self.hitCase | 1 << 4 | Self.ttlBits(ttl)
        case .stale(let ttl, let reason, let fwdStatus):
            let detail: UInt64 = switch reason {
            case .revalidate: 0
            case .error: 1
            case .budget: 2
            }
            return Self.staleCase | detail << 2 | Self.statusBits(fwdStatus) | Self.ttlBits(ttl)
        case .miss(let fwdStatus, let stored, let collapsed, let detail):
            let detailBits: UInt64 = switch detail {
            case nil: 0
            case .budgetExhausted: 1
            case .clientShareSpent: 2
            case .tooManyFetches: 3
            }
            return Self.missCase | detailBits << 2 | (stored ? 1 << 4 : 0) | (collapsed ? 1 << 5 : 0) | Self.statusBits(fwdStatus)
        }
    }

    /// The outcome a response's `annotation` carries; nil when it carries none.
    init?(annotation bits: UInt64) {
        let detail = (bits >> 2) & 3
        let status = Int((bits >> 16) & 0xFFFF)
        let fwdStatus: Int? = status == 0 ? nil : status
        let ttl = Int(Int32(truncatingIfNeeded: bits >> 32))
        switch bits & 3 {
        case Self.hitCase:
            self = bits & 1 << 4 != 0 ? .sharedHit(ttl: ttl) : .hit(ttl: ttl)
        case Self.staleCase:
            let reason: StaleReason = detail == 0 ? .revalidate : detail == 1 ? .error : .budget
            self = .stale(ttl: ttl, reason: reason, fwdStatus: fwdStatus)
        case Self.missCase:
            let missDetail: MissDetail? = switch detail {
            case 1: .budgetExhausted
            case 2: .clientShareSpent
            case 3: .tooManyFetches
            default: nil
            }
            self = .miss(fwdStatus: fwdStatus, stored: bits & 1 << 4 != 0, collapsed: bits & 1 << 5 != 0, detail: missDetail)
        default:
            return nil
        }
    }

    /// A ttl in bits 32-63.
    private static func ttlBits(_ ttl: Int) -> UInt64 {
        UInt64(UInt32(bitPattern: Int32(clamping: ttl))) << 32
    }

    /// An upstream status in bits 16-31 (an HTTP status always fits; 0 is none).
    private static func statusBits(_ status: Int?) -> UInt64 {
        guard let status else { return 0 }
        return UInt64(min(max(status, 1), 0xFFFF)) << 16
    }
}
