import Testing

@testable import AmodbProxy

/// JSON strings written by hand (error bodies, log lines) escape exactly what RFC 8259 §7 requires.
struct JSONTextTests {
    @Test(arguments: [
        ("plain text", "\"plain text\""), ("", "\"\""), ("café", "\"café\""),
        ("a\"b", "\"a\\\"b\""), ("a\\b", "\"a\\\\b\""), ("line\nbreak", "\"line\\nbreak\""), ("\u{1}", "\"\\u0001\""),
    ])
    func quotesJSONTextEscapingOnlyWhatMustBe(text: String, quoted: String) {
        #expect(JSONText.quoted(text) == quoted)
    }
}
