import Foundation
import Testing

/// Every link in README.md and docs/*.md leads somewhere: a relative link names a file or
/// folder of this repository, an `#anchor` names a heading of its page (by GitHub's slugs),
/// and an external link is a well-formed http(s) URL. External links are not fetched: the
/// build machines have no internet.
struct DocumentationLinksTests {
    /// The package root, three levels above this file (`Tests/IntegrationTests/…`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md and every page in docs/, relative to the root.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func everyLinkInTheREADMEAndTheDocsResolves() throws {
        let pages = try Self.pages()
        #expect(pages.count > 1, "docs/ holds pages: \(pages)")
        let checker = DocumentationLinks(root: Self.root)
        var links = 0
        for page in pages {
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            links += DocumentationLinks.links(in: text).count
            for problem in checker.problems(inPage: page) {
                Issue.record(Comment(rawValue: problem))
            }
        }
        // The pages link to each other: a checker that found no link would prove nothing.
        #expect(links >= 20, "links found: \(links)")
    }

    @Test(arguments: [
        ("Try it (offline, no key)", "try-it-offline-no-key"),
        ("What the proxy needs to know: `AMODB_TRUSTED_PROXIES`", "what-the-proxy-needs-to-know-amodb_trusted_proxies"),
        ("Strict HTTP/1.1 (RFC 9112)", "strict-http11-rfc-9112"),
        ("Caching: freshness, the budget and validation", "caching-freshness-the-budget-and-validation"),
        ("Who may call, and how often", "who-may-call-and-how-often"),
        ("A [linked](other.md) *emphasised* heading — here", "a-linked-emphasised-heading--here"),
        ("Größe & Übersicht", "größe--übersicht"),
    ])
    func headingsGetGitHubsAnchors(heading: String, anchor: String) {
        #expect(DocumentationLinks.anchor(of: heading) == anchor)
    }

    @Test func aMissingFileAMissingAnchorAndAMalformedURLAreEachNamed() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("docs"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let readme = """
            # Title

            ## Usage
            ## Usage

            [fine](docs/other.md) [fine](docs/other.md#the-section) [fine](#usage-1) [fine](docs/)
            [fine](https://example.com/a?b=c#d) <https://example.com/auto> [fine][reference]
            [gone](docs/missing.md) [gone](docs/other.md#no-such-section) [gone](#usage-2)
            [bad](http://) [bad](https://exa mple.com) [bad](ftp://example.com/file) [gone][dangling]
            `[in code](nowhere.md)`

            ```
            [in a fence](nowhere.md)
            ```

            [reference]: docs/other.md#the-section
            [dangling]: docs/absent.md
            """
        try readme.write(to: root.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
        try "# Other\n\n## The section\n\n[back](../README.md#title) [out](../../elsewhere.md)\n"
            .write(to: root.appendingPathComponent("docs/other.md"), atomically: true, encoding: .utf8)

        let checker = DocumentationLinks(root: root)
        let problems = checker.problems(inPage: "README.md")
        let named = [
            "docs/missing.md", "docs/other.md#no-such-section", "#usage-2", "http://", "https://exa mple.com",
            "ftp://example.com/file", "docs/absent.md",
        ]
        #expect(problems.count == named.count, "\(problems)")
        for target in named {
            #expect(
                problems.contains { $0.contains("README.md:") && $0.contains(target) },
                "\(target) is named: \(problems)")
        }
        #expect(!problems.contains { $0.contains("nowhere.md") }, "code is not read for links")
        let other = checker.problems(inPage: "docs/other.md")
        #expect(other.count == 1 && other[0].contains("../../elsewhere.md") && other[0].contains("outside"), "\(other)")
    }
}

/// Finds the links of Markdown pages and says which lead nowhere.
struct DocumentationLinks {
    /// A link's target and the line it is on (1-based).
    struct Link: Equatable {
        /// What the link points at, as written (`docs/budget.md#the-settings`, `https://…`).
        let target: String
        /// The line of the page it is on, from 1.
        let line: Int
    }

    /// The repository the pages belong to; relative links must stay inside it.
    let root: URL

    /// Problems with the links of `page` (relative to `root`), one sentence each, naming the
    /// page, the line and the target.
    func problems(inPage page: String) -> [String] {
        guard let text = try? String(contentsOf: root.appendingPathComponent(page), encoding: .utf8) else {
            return ["\(page): cannot be read"]
        }
        var problems: [String] = []
        for link in Self.links(in: text) {
            if let problem = problem(with: link.target, in: page, text: text) {
                problems.append("\(page):\(link.line): \(link.target): \(problem)")
            }
        }
        return problems
    }

    /// Why `target`, linked from `page`, leads nowhere; nil when it leads somewhere.
    private func problem(with target: String, in page: String, text: String) -> String? {
        if let scheme = Self.scheme(of: target) {
            guard scheme == "http" || scheme == "https" else {
                return "only http(s) links are allowed outside the repository"
            }
            guard !target.contains(where: \.isWhitespace), let url = URL(string: target), let host = url.host,
                !host.isEmpty
            else {
                return "not a well-formed URL"
            }
            return nil
        }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let path = parts[0].removingPercentEncoding ?? parts[0]
        let fragment = parts.count > 1 ? parts[1] : nil
        let pageDirectory = (page as NSString).deletingLastPathComponent
        var linked = page
        if !path.isEmpty {
            // GitHub reads a leading `/` as the repository's root.
            let joined = path.hasPrefix("/") ? String(path.dropFirst()) : pageDirectory + "/" + path
            guard let normalized = Self.normalized(joined) else { return "outside the repository" }
            guard FileManager.default.fileExists(atPath: root.appendingPathComponent(normalized).path) else {
                return "no such file"
            }
            linked = normalized
        }
        guard let fragment else { return nil }
        guard linked.hasSuffix(".md") else { return "an anchor in a file that is not Markdown cannot be checked" }
        let linkedText =
            linked == page
            ? text : (try? String(contentsOf: root.appendingPathComponent(linked), encoding: .utf8)) ?? ""
        return Self.anchors(in: linkedText).contains(fragment) ? nil : "no heading of \(linked) has this anchor"
    }

    /// `path` with its `.` and `..` components resolved; nil when it climbs above the root.
    static func normalized(_ path: String) -> String? {
        var components: [Substring] = []
        for component in path.split(separator: "/") where component != "." {
            if component == ".." {
                guard components.popLast() != nil else { return nil }
            } else {
                components.append(component)
            }
        }
        return components.joined(separator: "/")
    }

    /// The URL scheme a target starts with (`https`), if it has one.
    static func scheme(of target: String) -> String? {
        guard let colon = target.firstIndex(of: ":"), let first = target.first, first.isASCII, first.isLetter else {
            return nil
        }
        let scheme = target[..<colon]
        let allowed = scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }
        return allowed ? scheme.lowercased() : nil
    }

    /// The lines of `text` outside fenced code blocks, which are left out as empty lines so
    /// that line numbers stay; `codeSpans: false` also replaces code spans, whose text is no link.
    static func proseLines(of text: String, codeSpans: Bool = false) -> [String] {
        var fence: String?
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.drop { $0 == " " }
            let marker = trimmed.hasPrefix("```") ? "```" : trimmed.hasPrefix("~~~") ? "~~~" : nil
            if let open = fence {
                if let marker, marker == open { fence = nil }
                return ""
            }
            if let marker {
                fence = marker
                return ""
            }
            return codeSpans ? String(line) : withoutCodeSpans(String(line))
        }
    }

    /// `line` without its code spans (`` `…` ``): what is inside them is not a link.
    static func withoutCodeSpans(_ line: String) -> String {
        var result = ""
        var rest = Substring(line)
        while let open = rest.firstIndex(of: "`") {
            result += rest[..<open]
            let ticks = rest[open...].prefix { $0 == "`" }
            let afterOpen = rest[ticks.endIndex...]
            guard let close = afterOpen.range(of: String(ticks)) else {
                rest = afterOpen
                continue
            }
            result += "code"
            rest = afterOpen[close.upperBound...]
        }
        return result + rest
    }

    /// Every link target of `text`: inline links and images `[text](target "title")`,
    /// reference definitions `[name]: target`, and autolinks `<https://…>`. A reference
    /// `[text][name]` with no definition is reported as the target `[name]`.
    static func links(in text: String) -> [Link] {
        var links: [Link] = []
        var definitions: Set<String> = []
        var references: [(name: String, line: Int)] = []
        for (index, line) in proseLines(of: text).enumerated() {
            let number = index + 1
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("["), let end = trimmed.range(of: "]:"), trimmed.firstIndex(of: "]") == end.lowerBound
            {
                let name = trimmed[trimmed.index(after: trimmed.startIndex)..<end.lowerBound].lowercased()
                definitions.insert(name)
                let target = trimmed[end.upperBound...].drop { $0 == " " }.prefix { $0 != " " }
                links.append(Link(target: String(target), line: number))
                continue
            }
            var rest = Substring(line)
            while let bracket = rest.firstIndex(of: "]") {
                let after = rest[rest.index(after: bracket)...]
                if after.hasPrefix("("), let close = after.firstIndex(of: ")") {
                    let inside = after[after.index(after: after.startIndex)..<close]
                    let target = inside.prefix { $0 != " " }
                    // `https://exa mple.com`: a space before a part that is no title is part of the target.
                    let remainder = inside.dropFirst(target.count).drop { $0 == " " }
                    let whole = remainder.isEmpty || remainder.hasPrefix("\"") ? String(target) : String(inside)
                    links.append(Link(target: whole, line: number))
                    rest = after[after.index(after: close)...]
                } else if after.hasPrefix("["), let close = after.firstIndex(of: "]") {
                    let name = after[after.index(after: after.startIndex)..<close].lowercased()
                    if !name.isEmpty { references.append((name, number)) }
                    rest = after[after.index(after: close)...]
                } else {
                    rest = after
                }
            }
            var autolinks = Substring(line)
            while let open = autolinks.range(of: "<http") {
                let after = autolinks[autolinks.index(after: open.lowerBound)...]
                guard let close = after.firstIndex(of: ">") else { break }
                links.append(Link(target: String(after[..<close]), line: number))
                autolinks = after[after.index(after: close)...]
            }
        }
        for reference in references where !definitions.contains(reference.name) {
            links.append(Link(target: "[\(reference.name)]", line: reference.line))
        }
        return links.sorted { ($0.line, $0.target) < ($1.line, $1.target) }
    }

    /// The anchors of a page's headings, as GitHub makes them: a heading's slug, then
    /// `-1`, `-2`… for the headings that repeat it.
    static func anchors(in text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for line in proseLines(of: text, codeSpans: true) {
            let hashes = line.prefix { $0 == "#" }
            guard (1...6).contains(hashes.count), line.dropFirst(hashes.count).first == " " else { continue }
            var heading = line.dropFirst(hashes.count).trimmingCharacters(in: .whitespaces)
            while heading.hasSuffix("#") { heading = String(heading.dropLast()).trimmingCharacters(in: .whitespaces) }
            let slug = anchor(of: heading)
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// GitHub's slug of a heading: its text as shown (a link's text, no markup), lowercased,
    /// without anything but letters, digits, `-`, `_` and spaces, each space a `-`.
    static func anchor(of heading: String) -> String {
        var shown = ""
        var rest = Substring(heading)
        // A link shows its text: `[text](target)` becomes `text`.
        while let open = rest.firstIndex(of: "[") {
            shown += rest[..<open]
            let after = rest[rest.index(after: open)...]
            if let close = after.range(of: "]("), let end = after[close.upperBound...].firstIndex(of: ")") {
                shown += after[..<close.lowerBound]
                rest = after[after.index(after: end)...]
            } else {
                shown += "["
                rest = after
            }
        }
        shown += rest
        return String(
            shown.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            })
    }
}
