public import AmodbHTTP

extension HTTPResponse {
    /// A JSON error in amodb's shape, `{"status_code":…,"status_message":"…","success":false}`,
    /// never stored by caches. `status_code` carries the HTTP status. Written by hand: error
    /// answers are what a flood of bad requests gets, so they must be cheap.
    public static func error(_ status: Int, _ message: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        let body = "{\"status_code\":\(status),\"status_message\":\(JSONText.quoted(message)),\"success\":false}"
        var headers = headers
        headers.set("Cache-Control", "no-store")
        return .json(status, Array(body.utf8), headers: headers)
    }
}
