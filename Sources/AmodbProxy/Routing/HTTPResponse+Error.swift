public import AmodbHTTP
import AmodbModels

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

    /// The 404 for a path the proxy does not forward, naming it (as the access log does:
    /// `LoggedPath`, without its query, cut and escaped) and the paths it serves, so that a
    /// developer whose library asks for search or TV reads why, rather than amodb's "not
    /// found" for a movie it does not have. Its `status_code` is 404, as on every error the
    /// proxy makes itself: amodb was not asked, so none of amodb's codes would be true.
    static func unserved(_ loggedPath: String) -> HTTPResponse {
        .error(404, "This proxy does not serve \(loggedPath); it serves \(servedPaths).")
    }

    /// The paths the proxy forwards, as apps write them, made from the route table (the
    /// switch is exhaustive: a route added there must be named here).
    static let servedPaths: String = {
        let paths = Route.kindExamples.map { route in
            switch route {
            case .trending:
                "/3/trending/{\(MediaType.allCases.map(\.rawValue).joined(separator: "|"))}"
                    + "/{\(TimeWindow.allCases.map(\.rawValue).joined(separator: "|"))}"
            case .movie: "/3/movie/{id} (a positive integer)"
            case .configuration: "/3/configuration"
            }
        }
        return paths.dropLast().joined(separator: ", ") + " and " + paths.last!
    }()
}
