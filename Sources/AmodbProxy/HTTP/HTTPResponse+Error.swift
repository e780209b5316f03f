import AmodbModels
import Foundation

extension HTTPResponse {
    /// A JSON error in amodb's shape, `{"success":false,"status_code":…,"status_message":"…"}`,
    /// never stored by caches. `status_code` carries the HTTP status.
    public static func error(_ status: Int, _ message: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        let body = AmodbErrorBody(statusCode: status, statusMessage: message)
        let bytes = (try? JSONEncoder.sorted.encode(body)).map { [UInt8]($0) } ?? Array(#"{"success":false}"#.utf8)
        var headers = headers
        headers.set("Cache-Control", "no-store")
        return .json(status, bytes, headers: headers)
    }
}

extension JSONEncoder {
    /// Sorted keys, so bodies (and ETags) are the same from run to run.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
