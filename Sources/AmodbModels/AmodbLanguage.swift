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
        guard var tag else { return fallback }
        return tag.withUTF8 { resolve($0, among: base) } ?? fallback
    }

    /// The same, of a normalized tag's bytes: one of `base`'s own strings, or `nil` for the
    /// fallback (whether or not `base` holds it).
    static func resolve(_ tag: UnsafeBufferPointer<UInt8>, among base: [String]) -> String? {
        var match = base.first { utf8(of: $0, equals: tag) }
        if match == nil, !tag.contains(UInt8(ascii: "-")) {
            match = base.first { language in
                language.utf8.count > tag.count && language.utf8.starts(with: tag)
                    && language.utf8.dropFirst(tag.count).first == UInt8(ascii: "-")
            }
        }
        guard let match, match != fallback else { return nil }
        return match
    }
}
