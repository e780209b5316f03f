import Testing

@testable import AmodbModels

/// A query read as strings (`AmodbRequest(route:query:)`, `normalizedLanguage`): what it
/// gives must be what an independent reading written with `String` operations gives, for
/// any text. (The proxy's byte reader is held to this reading in `RouteRequestTests`.)
struct QueryReadingTests {
    /// The tag normalization of the oracle: split on `-`, check, case each subtag by its role.
    static func oracleNormalized(_ tag: String) -> String? {
        guard (2...35).contains(tag.utf8.count) else { return nil }
        var normalized: [String] = []
        for (index, subtag) in tag.split(separator: "-", omittingEmptySubsequences: false).enumerated() {
            guard (1...8).contains(subtag.utf8.count),
                subtag.utf8.allSatisfy({ ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || ($0 >= 0x30 && $0 <= 0x39) })
            else { return nil }
            let letters = subtag.utf8.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }
            if index == 0 {
                guard (2...3).contains(subtag.count), letters else { return nil }
                normalized.append(subtag.lowercased())
            } else if subtag.count == 2 && letters {
                normalized.append(subtag.uppercased())
            } else if subtag.count == 4 && letters {
                normalized.append(subtag.prefix(1).uppercased() + subtag.dropFirst().lowercased())
            } else {
                normalized.append(subtag.lowercased())
            }
        }
        return normalized.joined(separator: "-")
    }

    /// The oracle's resolution: an exact base tag, else a bare language's base tag, else English (none).
    static func oracleResolved(_ tag: String, among base: [String]) -> String? {
        let resolved =
            base.contains(tag)
            ? tag : (!tag.contains("-") ? base.first { $0.hasPrefix(tag + "-") } : nil) ?? AmodbLanguage.fallback
        return resolved == AmodbLanguage.fallback ? nil : resolved
    }

    /// Every text up to `maxLength` characters over an alphabet that reaches every branch:
    /// letters of both cases, a digit, `-`, and a character no tag may hold (multi-byte UTF-8).
    static func everyText(upTo maxLength: Int, alphabet: [Character] = ["a", "Z", "1", "-", "é"]) -> [String] {
        var texts = [""]
        var last = [""]
        for _ in 0..<maxLength {
            last = last.flatMap { prefix in alphabet.map { prefix + String($0) } }
            texts += last
        }
        return texts
    }

    @Test func languageTagsAreNormalizedAsTheStringReadingDid() throws {
        var checked = 0
        for tag in Self.everyText(upTo: 7) {
            let expected = Self.oracleNormalized(tag)
            let normalized = try? AmodbRequest.normalizedLanguage(tag)
            #expect(normalized == expected, "\(tag.debugDescription)")
            if expected != nil { checked += 1 }
        }
        #expect(checked > 1_000, "enough of the texts are valid tags to mean something")
    }

    @Test func languagesResolveAsTheStringReadingDid() throws {
        let base = AmodbLanguage.base
        for tag in Self.everyText(upTo: 5, alphabet: ["d", "E", "-", "z", "h", "N", "1"]) + [
            "de", "DE", "pt-br", "en-us", "en",
        ] {
            let request = try? AmodbRequest(route: .movie(id: 1), query: [("language", tag)]).resolvingLanguage(
                among: base)
            let expected: AmodbRequest?? =
                tag.isEmpty
                ? .some(try AmodbRequest(route: .movie(id: 1)))
                : Self.oracleNormalized(tag).map {
                    try? AmodbRequest(route: .movie(id: 1), language: Self.oracleResolved($0, among: base))
                }
            #expect(request == expected.flatMap { $0 }, "\(tag.debugDescription)")
        }
    }

    @Test(
        "A query's parameters are read in any order, with the string reading's errors",
        arguments: [
            ("page=abc&page=2", "Invalid parameter: page is given more than once."),
            ("language=x&page=", "Invalid parameter: page is empty."),
            ("page=0x1&language=%", "Invalid parameter: page must be an integer from 1 to 500."),
            ("language=e&page=600", "Invalid parameter: language must be a language tag such as en-US."),
            ("page=600&language=de", "Invalid parameter: page must be an integer from 1 to 500."),
        ])
    func errorsComeInTheirOrder(query: String, message: String) {
        let items = query.split(separator: "&").map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
        }
        #expect(throws: RequestError.self) { try AmodbRequest(route: .trending(.all, .day), query: items) }
        do {
            _ = try AmodbRequest(route: .trending(.all, .day), query: items)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func appendedNamesAreKeptSortedOnceWithSpacesAroundThemIgnored() throws {
        let all = AmodbRequest.appendableResources.sorted().joined(separator: " , ")
        let request = try AmodbRequest(route: .movie(id: 1), query: [("append_to_response", all)])
        #expect(request.appendToResponse == AmodbRequest.appendableResources.sorted())
        let odd = try AmodbRequest(
            route: .movie(id: 1), query: [("append_to_response", ",, credits ,videos,credits,Videos,watch/providers,")])
        #expect(odd.appendToResponse == ["credits", "videos", "watch/providers"])
    }
}
