/// The languages amodb translates, and how a request's `language` maps onto them.
/// Shared by the proxy (cache keys) and the stand-in (answers), so both fold alike.
public enum AmodbLanguage {
    /// amodb's default language, and the answer for any language it does not translate.
    public static let fallback = "en-US"

    /// The 14 base languages amodb translates.
    public static let base: [String] = [
        "en-US", "de-DE", "fr-FR", "es-ES", "it-IT", "pt-BR", "ja-JP",
        "ko-KR", "zh-CN", "ru-RU", "nl-NL", "pl-PL", "sv-SE", "tr-TR",
    ]

    /// The base language that answers a normalized tag: an exact base tag answers
    /// itself, a bare language subtag (`de`) its base language; anything else
    /// (`de-AT`, `xx-XX`), and no tag at all, is answered in English.
    public static func resolve(_ tag: String?, among base: [String] = AmodbLanguage.base) -> String {
        guard let tag else { return fallback }
        if let exact = base.first(where: { $0.utf8.elementsEqual(tag.utf8) }) { return exact }
        guard !tag.utf8.contains(UInt8(ascii: "-")) else { return fallback }
        let language = base.first { language in
            language.utf8.count > tag.utf8.count && language.utf8.starts(with: tag.utf8)
                && language.utf8.dropFirst(tag.utf8.count).first == UInt8(ascii: "-")
        }
        return language ?? fallback
    }
}
