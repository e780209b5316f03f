/// The languages amodb translates, and how a request's `language` maps onto them.
enum SandboxLanguage {
    /// amodb's default language, and the answer for any language it does not translate.
    static let fallback = "en-US"

    /// The 14 base languages amodb translates.
    static let base: [String] = [
        "en-US", "de-DE", "fr-FR", "es-ES", "it-IT", "pt-BR", "ja-JP",
        "ko-KR", "zh-CN", "ru-RU", "nl-NL", "pl-PL", "sv-SE", "tr-TR",
    ]

    /// A normalized tag (`de-DE`, `de`) to the base language that answers it.
    /// An exact base tag answers itself, a bare language subtag (`de`) its base
    /// language; anything else (`de-AT`, `xx-XX`) is answered in English.
    static func resolve(_ tag: String?) -> String {
        guard let tag else { return fallback }
        if base.contains(tag) { return tag }
        if !tag.contains("-"), let match = base.first(where: { $0.hasPrefix(tag + "-") }) { return match }
        return fallback
    }
}
