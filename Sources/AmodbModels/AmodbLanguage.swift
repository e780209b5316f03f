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
        return tag.withUTF8 { resolve($0, among: base) } ?? fallback  // the byte reader's, in AmodbRequest+Query
    }
}
