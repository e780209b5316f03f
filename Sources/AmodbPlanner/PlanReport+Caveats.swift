extension PlanReport {
    /// What the reader must know before trusting the table, one sentence each: the log
    /// too short to tell movie TTLs apart, and the lines skipped. Both reports (the text's
    /// lines, the page's list) show these, written here only, so neither can drop one and
    /// leave identical rows looking like a bug.
    static func caveats(_ contents: AccessLogReader.Contents, options: PlanOptions) -> [String] {
        var caveats: [String] = []
        let covered = (contents.requests.last?.time ?? 0) - (contents.requests.first?.time ?? 0)
        // A TTL longer than the log never expires in the replay: its rows show no refresh.
        let longer = options.movieTTLs.filter { $0 > covered }
        if !longer.isEmpty {
            let ttls = longer.map(duration).joined(separator: ", ")
            let many = longer.count > 1
            caveats.append(
                "The log covers less than the movie TTL\(many ? "s" : "") \(ttls): no entry expires within "
                    + "\(many ? "them" : "it") in the replay, so \(many ? "their rows" : "its row") read\(many ? "" : "s") "
                    + "alike. Replay at least \(duration(longer.max() ?? 0)) of log to compare \(many ? "them" : "it")."
            )
        }
        if contents.linesBeforeKeys > 0 {
            caveats.append(
                "\(lines(contents.linesBeforeKeys)) written before keys were logged \(were(contents.linesBeforeKeys)) skipped."
            )
        }
        if contents.linesNotForwarded > 0 {
            caveats.append(
                "\(lines(contents.linesNotForwarded)) that asked amodb nothing (health checks, refusals) "
                    + "\(were(contents.linesNotForwarded)) skipped.")
        }
        if contents.linesUnreadable > 0 {
            let what = contents.linesUnreadable == 1 ? "is no access-log line" : "are no access-log lines"
            caveats.append(
                "\(lines(contents.linesUnreadable)) that \(what) \(were(contents.linesUnreadable)) skipped.")
        }
        return caveats
    }
}
