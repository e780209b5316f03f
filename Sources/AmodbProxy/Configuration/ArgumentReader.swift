/// Command-line arguments read one at a time, `--name value` and `--name=value` alike: the
/// one reader of the proxy's options and of `plan`'s.
package struct ArgumentReader {
    private let arguments: [String]
    private var index = 0
    /// What `--name=value` gave after its `=`, for the argument just read.
    private var inlineValue: String?
    /// The argument just read, whole, as the user typed it.
    package private(set) var argument = ""
    /// The name of the argument just read: `--name` of `--name=value`.
    private(set) var name = ""
    /// What errors start with (`plan: `), so they say which command they are about.
    private let context: String

    package init(_ arguments: [String], context: String = "") {
        self.arguments = arguments
        self.context = context
    }

    /// The next argument's name, or `nil` once every argument has been read.
    package mutating func next() -> String? {
        guard index < arguments.count else { return nil }
        argument = arguments[index]
        index += 1
        (name, inlineValue) = (argument, nil)
        if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
            name = String(argument[..<equals])
            inlineValue = String(argument[argument.index(after: equals)...])
        }
        return name
    }

    /// The value of the argument just read: after its `=`, else the argument that follows.
    package mutating func value() throws(ConfigurationError) -> String {
        if let inlineValue { return inlineValue }
        guard index < arguments.count else {
            throw ConfigurationError("\(context)\(ConfigurationLoader.shown(name)) needs a value")
        }
        index += 1
        return arguments[index - 1]
    }
}
