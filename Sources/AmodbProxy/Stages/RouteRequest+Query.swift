import AmodbBytes
import AmodbModels

/// A query's items read on their bytes: each known parameter the route takes, checked and
/// put in canonical form as `AmodbRequest(route:query:)` does with strings.
extension RouteRequest {
    /// `appendableResources`, sorted: an `append_to_response` list read from bytes is a set
    /// of bits, bit `i` for the name at `i` here, and comes out sorted and without duplicates.
    static let appendableInOrder: [String] = AmodbRequest.appendableResources.sorted()

    /// The names whose bits `mask` has, in order, at most `maxAppendedResources`.
    static func appendedResources(mask: UInt32) -> [String] {
        guard mask != 0 else { return [] }
        var names: [String] = []
        names.reserveCapacity(mask.nonzeroBitCount)
        for (index, name) in appendableInOrder.enumerated() where mask & (1 << index) != 0 {
            names.append(name)
        }
        return Array(names.prefix(AmodbRequest.maxAppendedResources))
    }

    /// The bits of the names in an `append_to_response` value (comma-separated, spaces around
    /// a name ignored, unknown names dropped).
    static func appendedMask(_ value: Span<UInt8>) -> UInt32 {
        var mask: UInt32 = 0
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            var first = start
            var last = end
            while first < last, value[first] == UInt8(ascii: " ") { first += 1 }
            while last > first, value[last - 1] == UInt8(ascii: " ") { last -= 1 }
            if last > first {
                let name = value.extracting(first..<last)
                for (index, known) in appendableInOrder.enumerated() where ASCIIBytes.utf8(of: known, equals: name) {
                    mask |= 1 << index
                    break
                }
            }
            start = end + 1
        }
        return mask
    }

    /// What a query's items say, read one item at a time: each known parameter the route
    /// takes once, with the errors of its value kept until every item is read (a parameter
    /// given twice is refused at once, before anything a value says).
    struct QueryReader {
        let route: Route
        let base: [String]?
        /// The parameters read so far, a bit each (`bit(of:)`).
        private var seen: UInt8 = 0
        /// The language (resolved among `base` when given), or why it is refused.
        private(set) var language: Result<String?, RequestError> = .success(nil)
        private(set) var page: Int?
        private(set) var pageError: RequestError?
        private(set) var appended: UInt32 = 0
        /// A search's text as given (decoded, bytes that are not UTF-8 read as U+FFFD, as
        /// the models read them); made canonical once every item is read.
        private(set) var search: String?

        init(route: Route, base: [String]?) {
            self.route = route
            self.base = base
        }

        mutating func read(name: Span<UInt8>, value: Span<UInt8>) throws(RequestError) {
            guard let parameter = RouteRequest.parameter(named: name), RouteRequest.takes(route.kind, parameter) else {
                return
            }
            let bit = RouteRequest.bit(of: parameter)
            guard seen & bit == 0 else { throw .invalidValue(parameter, "is given more than once") }
            seen |= bit
            switch parameter {
            case .language:
                // Wrappers send `language=` for amodb's default: the same request as none.
                guard !value.isEmpty else { return }
                language = Result { () throws(RequestError) in
                    try RouteRequest.normalizingLanguage(value) { (tag) -> String? in
                        guard let base else { return tag.decodedString() }
                        return RouteRequest.resolve(tag, among: base)
                    }
                }
            case .page:
                if value.isEmpty {
                    pageError = .invalidValue(.page, "is empty")
                } else if let number = RouteRequest.positiveInteger(value) {
                    page = number
                } else {
                    pageError = .invalidValue(.page, "must be an integer from 1 to 500")
                }
            case .appendToResponse:
                appended = RouteRequest.appendedMask(value)
            case .query:
                // A search is a miss almost always: its text is read into a string.
                search = value.decodedString()
            }
        }
    }

    /// The parameter a query item's name is, exactly.
    static func parameter(named name: Span<UInt8>) -> QueryParameter? {
        QueryParameter.allCases.first { ASCIIBytes.utf8(of: $0.rawValue, equals: name) }
    }

    /// A parameter's bit in a set of parameters.
    static func bit(of parameter: QueryParameter) -> UInt8 {
        switch parameter {
        case .language: 1
        case .page: 2
        case .appendToResponse: 4
        case .query: 8
        }
    }

    /// Normalizes a BCP 47 tag (`EN-us` → `en-US`, `zh-hant-tw` → `zh-Hant-TW`) into a buffer
    /// on the stack, and returns what `body` makes of it; throws for anything but letters,
    /// digits and `-` in a tag's shape (a 2–3 letter language, subtags of 1–8), as
    /// `AmodbRequest.normalizedLanguage` does.
    static func normalizingLanguage<Result>(
        _ tag: Span<UInt8>, _ body: (Span<UInt8>) -> Result
    ) throws(RequestError) -> Result {
        let invalid = RequestError.invalidValue(.language, "must be a language tag such as en-US")
        guard (2...35).contains(tag.count) else { throw invalid }
        // On the stack: a tag is at most 35 bytes.
        var normalized = InlineArray<35, UInt8>(repeating: 0)
        do {
            var start = 0
            var index = 0
            while start <= tag.count {
                var end = start
                while end < tag.count, tag[end] != UInt8(ascii: "-") { end += 1 }
                let length = end - start
                guard (1...8).contains(length) else { throw invalid }
                var letters = true
                for position in start..<end {
                    let byte = tag[position]
                    let isLetter = (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
                    guard isLetter || (byte >= 0x30 && byte <= 0x39) else { throw invalid }
                    letters = letters && isLetter
                }
                if index == 0 { guard (2...3).contains(length), letters else { throw invalid } }
                for position in start..<end {
                    let byte = tag[position]
                    let isLetter = (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
                    // The language and other subtags lower case, a region (2 letters) upper case,
                    // a script (4 letters) with a capital.
                    let upper = index > 0 && letters && (length == 2 || (length == 4 && position == start))
                    normalized[position] = isLetter ? (upper ? byte & ~0x20 : byte | 0x20) : byte
                }
                if end < tag.count { normalized[end] = UInt8(ascii: "-") }
                index += 1
                start = end + 1
            }
        }
        return body(normalized.span.extracting(..<tag.count))
    }

    /// `AmodbLanguage.resolve` of a normalized tag's bytes: one of `base`'s own strings (no
    /// copy made per request), or `nil` for the fallback (whether or not `base` holds it).
    static func resolve(_ tag: Span<UInt8>, among base: [String]) -> String? {
        var match = base.first { ASCIIBytes.utf8(of: $0, equals: tag) }
        if match == nil, !tag.contains(UInt8(ascii: "-")) {
            match = base.first { language in
                let utf8 = language.utf8.span
                return utf8.count > tag.count && utf8[tag.count] == UInt8(ascii: "-")
                    && utf8.extracting(..<tag.count).elementsEqual(tag)
            }
        }
        guard let match, match != AmodbLanguage.fallback else { return nil }
        return match
    }
}
