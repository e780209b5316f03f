import AmodbModels
import Foundation
import Synchronization

/// Notices when amodb's answers stop matching the shared models (`AmodbModels`), which
/// apps decode with: such a body is still stored and served as sent (amodb may change
/// its shapes), but operators should know before the apps break. Each one is counted
/// (`amodb_proxy_schema_mismatch_total{route}`); a warning naming the field path that
/// failed, never a value, is logged at most once per route per `warningInterval`.
final class SchemaMismatchReporter: Sendable {
    /// The shortest time between two warnings for one route, in seconds.
    static let warningInterval: Double = 3600

    private let logger: ProxyLogger
    private let clock: any ProxyClock
    private let metrics: ProxyMetrics
    /// When each route (by template) last had a warning, in seconds since 1970.
    private let lastWarning = Mutex<[String: Double]>([:])

    /// Counts into `metrics`; warns through `logger`, reading the hour from `clock`.
    init(logger: ProxyLogger, clock: any ProxyClock, metrics: ProxyMetrics) {
        self.logger = logger
        self.clock = clock
        self.metrics = metrics
    }

    /// Decodes `body` as `route`'s model; counts and perhaps logs a failure.
    func check(_ body: [UInt8], for route: Route) {
        guard let mismatch = Self.mismatch(in: body, for: route) else { return }
        metrics.recordSchemaMismatch(route)
        let now = clock.now()
        let due = lastWarning.withLock { last -> Bool in
            if let previous = last[route.template], now - previous < Self.warningInterval, now >= previous {
                return false
            }
            last[route.template] = now
            return true
        }
        guard due else { return }
        logger.warning(
            "amodb's answer does not decode as the shared models; stored and served as sent",
            [
                "path": route.template, "field": mismatch.field, "problem": mismatch.problem,
            ])
    }

    /// Where and how a body fails to decode: a coding path such as
    /// `results[3].vote_average`, and the kind of failure (never the value found).
    struct Mismatch: Sendable, Equatable {
        /// The coding path that failed; empty for the whole body.
        var field: String
        /// `wrong type`, `missing`, `null or missing value` or `unreadable value`.
        var problem: String
    }

    /// The first decoding failure of `body` as `route`'s model, if any.
    static func mismatch(in body: [UInt8], for route: Route) -> Mismatch? {
        let decoder = JSONDecoder()
        do {
            _ = try decoder.decode(route.entry.model, from: Data(body))
            return nil
        } catch let error as DecodingError {
            // Only the path and the kind: a debug description can quote the value.
            switch error {
            case .typeMismatch(_, let context): return Mismatch(field: path(context.codingPath), problem: "wrong type")
            case .valueNotFound(_, let context):
                return Mismatch(field: path(context.codingPath), problem: "null or missing value")
            case .keyNotFound(let key, let context):
                return Mismatch(field: path(context.codingPath + [key]), problem: "missing")
            case .dataCorrupted(let context):
                return Mismatch(field: path(context.codingPath), problem: "unreadable value")
            @unknown default: return Mismatch(field: "", problem: "does not decode")
            }
        } catch {
            return Mismatch(field: "", problem: "does not decode")
        }
    }

    /// `results[3].vote_average`: array positions in brackets, member names joined by dots.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }
}
