import AmodbModels

extension ConfigurationLoader {
    /// How long answers stay, and how much of them.
    static let cacheLifetimeSettings: [Setting] = [
        Setting(
            "AMODB_CACHE_TTL", flag: "--cache-ttl", \.cacheTTL, .seconds(1...year),
            help: "seconds a stored list (trending, movie lists, searches) is fresh", accepts: "1 s – a year",
            doc: "seconds a list (trending, the movie lists, a search) is fresh"),
        Setting(
            "AMODB_MOVIE_TTL", flag: "--movie-ttl", \.movieTTL, .seconds(1...year),
            help: "seconds stored details (a movie, show, person) are fresh", accepts: "1 s – a year",
            doc: "seconds details (a movie, a show, a person) are fresh"),
        Setting(
            "AMODB_CONFIGURATION_TTL", flag: "--configuration-ttl", \.configurationTTL, .seconds(1...year),
            help: "seconds the stored /3/configuration and genre list are fresh", accepts: "1 s – a year",
            doc: "seconds `/3/configuration` and `/3/genre/movie/list` are fresh"),
        Setting(
            "AMODB_CACHE_MAX_BYTES", flag: "--cache-max-bytes", \.cacheMaxBytes, .integer(1024...(1 << 40)),
            help: "most body bytes the cache holds", accepts: "1 KiB – 1 TiB",
            doc: "most bytes cached (bodies with their variants, keys, 256 per entry); no entry over 1/32 of it"),
        Setting(
            "AMODB_MAX_STALE", flag: "--max-stale", \.maxStaleSeconds, .seconds(0...year),
            help: "seconds a stale answer may still be served", accepts: "0 – a year",
            doc: "oldest age (s) at which an answer may still be served stale (at least twice its TTL; `0`: never)"),
        Setting(
            "AMODB_NEGATIVE_TTL", flag: "--negative-ttl", \.negativeTTL, .seconds(0...day),
            help: "seconds amodb's 404 for a path is remembered", accepts: "0 – a day",
            doc: "seconds amodb's 404 is remembered"),
    ]

    /// Which entries exist, and where they are kept across restarts.
    static let cacheStorageSettings: [Setting] = [
        Setting(
            "AMODB_LANGUAGES", flag: "--languages", \.languages, .languages,
            help: "amodb's translated languages; others share en-US", accepts: "comma-separated language tags",
            doc: "translated languages; others share `en-US`"),
        Setting(
            "AMODB_CACHE_SNAPSHOT", flag: "--cache-snapshot", \.snapshotPath, .optional,
            help: "file the cache is saved to and loaded from; empty: off", accepts: "a file path; empty: off",
            doc: "file the cache is saved to and loaded from", example: "/var/lib/amodb-proxy/cache.json"),
        Setting(
            "AMODB_STATE_DIR", flag: "--state-dir", \.stateDirectory, .optional,
            help:
                "directory for what must outlive a restart (the calls to amodb of the last minute); default ~/.local/state/amodb-proxy/port-<PORT>; empty: memory only",
            accepts: "a directory; empty: memory only",
            doc:
                "directory for what must outlive a restart: the calls to amodb of the last minute (`budget-calls.log`, locked by one process); unset: `$XDG_STATE_HOME/amodb-proxy/port-<PORT>` (else `~/.local/state/…`; none with `PORT=0`), `/var/lib/amodb-proxy` in the container; empty: memory only ([budget.md](budget.md#a-restart-remembers))",
            example: "/var/lib/amodb-proxy"),
        Setting(
            "AMODB_SNAPSHOT_INTERVAL", flag: "--snapshot-interval", \.snapshotIntervalSeconds, .seconds(1...day),
            help: "seconds between cache snapshots", accepts: "1 s – a day", doc: "seconds between snapshots"),
    ]
}

extension SettingValue where Value == [String] {
    /// Language tags, normalized as requests' are; at least one.
    fileprivate static let languages = SettingValue(
        read: { value, name throws(ConfigurationError) in
            var languages: [String] = []
            for tag in value.split(separator: ",") {
                do {
                    languages.append(try AmodbRequest.normalizedLanguage(String(tag.trimmingSpacesAndNewlines())))
                } catch {
                    throw ConfigurationError(
                        "\(name) must be a comma-separated list of tags such as en-US,de-DE, not \(ConfigurationLoader.shown(value))"
                    )
                }
            }
            guard !languages.isEmpty else { throw ConfigurationError("\(name) must name at least one language") }
            return languages
        }, show: { $0.joined(separator: ",") })
}
