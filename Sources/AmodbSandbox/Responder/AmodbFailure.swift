import AmodbModels

/// One of amodb's error answers: the HTTP status, amodb's own `status_code` and its
/// message, in one table so every refusal the sandbox makes reads like amodb's.
///
/// No message contains anything taken from the request: a presented key, in
/// particular, can never come back in a body.
struct AmodbFailure: Sendable, Equatable {
    var status: Int
    var code: Int
    var message: String

    /// 401: no key, an unknown key or a suspended one.
    static let invalidKey = AmodbFailure(
        status: 401, code: 7, message: "Invalid API key: You must be granted a valid key.")
    /// 402: the key's plan has expired (a sandbox code; TMDB has no 402).
    static let planExpired = AmodbFailure(
        status: 402, code: 48, message: "Your plan has expired: renew it to use the API again.")
    /// 404: no such path, or no such movie, show or person.
    static let notFound = AmodbFailure(
        status: 404, code: 34, message: "The resource you requested could not be found.")
    /// 405: only GET and HEAD exist.
    static let methodNotAllowed = AmodbFailure(
        status: 405, code: 3, message: "Invalid method: only GET and HEAD are supported.")
    /// 400: `page` outside 1…500 or not an integer.
    static let invalidPage = AmodbFailure(
        status: 400, code: 22,
        message: "Invalid page: Pages start at 1 and max at 500. They are expected to be an integer.")
    /// 500: amodb failed.
    static let internalError = AmodbFailure(
        status: 500, code: 11, message: "Internal error: Something went wrong, contact amodb.")

    /// 400: a parameter amodb would not accept (the message names the parameter, never its value).
    static func invalidParameter(_ error: RequestError) -> AmodbFailure {
        if case .invalidValue(.page, _) = error { return invalidPage }
        return AmodbFailure(status: 400, code: 47, message: "The input is not valid. \(error.description)")
    }

    /// 429: over the plan's limit; `count` is this call's number in the window.
    static func overLimit(count: Int, limit: Int) -> AmodbFailure {
        AmodbFailure(
            status: 429, code: 25, message: "Your request count (\(count)) is over the allowed limit of (\(limit)).")
    }

    /// amodb's answer for an HTTP status, for scripted failures.
    static func forStatus(_ status: Int, limit: Int) -> AmodbFailure {
        switch status {
        case 400: AmodbFailure(status: 400, code: 47, message: "The input is not valid.")
        case 401: invalidKey
        case 402: planExpired
        case 403:
            AmodbFailure(
                status: 403, code: 10,
                message: "Suspended API key: Access to your account has been suspended, contact amodb.")
        case 404: notFound
        case 405: methodNotAllowed
        case 429: overLimit(count: limit + 1, limit: limit)
        case 500: internalError
        case 501: AmodbFailure(status: 501, code: 2, message: "Invalid service: this service does not exist.")
        case 502: AmodbFailure(status: 502, code: 43, message: "Couldn't connect to the backend server.")
        case 503:
            AmodbFailure(
                status: 503, code: 9, message: "Service offline: This service is temporarily offline, try again later.")
        case 504:
            AmodbFailure(status: 504, code: 24, message: "Your request to the backend server timed out. Try again.")
        default: AmodbFailure(status: status, code: 11, message: "Internal error: Something went wrong, contact amodb.")
        }
    }

    /// The JSON body, `{"status_code":…,"status_message":"…","success":false}`.
    var body: AmodbErrorBody {
        AmodbErrorBody(statusCode: code, statusMessage: message)
    }
}
