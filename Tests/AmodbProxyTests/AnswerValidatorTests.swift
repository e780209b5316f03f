import AmodbHTTP
import AmodbModels
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

private let key = Secret(ProxyHarness.key)
private let movie = Route.movie(id: 550)
private let trending = Route.trending(.movie, .week)

/// Every character of `text` as a `\uXXXX` escape.
private func unicodeEscaped(_ text: String) -> String {
    text.unicodeScalars.map {
        "\\u" + String(repeating: "0", count: 4 - String($0.value, radix: 16).count) + String($0.value, radix: 16)
    }.joined()
}

@Suite struct AnswerValidatorTests {
    private let validator = AnswerValidator(key: key)

    @Test(arguments: [
        ("ratings as bare numbers", #"{"id":550,"title":"Fight Club","ratings":{"imdb":8.8,"tmdb":8.4}}"#),
        (
            "numbers as strings",
            #"{"id":550,"title":"Fight Club","vote_average":"8.4","runtime":"139","budget":"63000000"}"#
        ),
        ("a new nested shape", #"{"id":550,"title":"Fight Club","genres":{"18":"Drama"},"credits":[["Brad Pitt"]]}"#),
        ("unknown fields and null", #"{"id":550,"title":null,"new_field":{"a":[1,2,{"b":true}]},"poster_path":null}"#),
        ("the id as a string", #"{"id":"550"}"#),
        (
            "escapes and non-ASCII text",
            #"{"id":550,"title":"Fight Club \u00e9 \ud83c\udfac \"quoted\" \/ é 🎬","overview":"a\nb"}"#
        ),
        ("white space around", " \r\n\t{ \"id\" : 550 } \n"),
    ])
    func storesAMovieWhateverItsNestedShape(_ name: String, _ body: String) {
        #expect(validator.problem(with: Array(body.utf8), for: movie) == nil, "\(name)")
    }

    @Test(arguments: [
        ("results of a new kind", #"{"page":1,"results":[{"media_type":"collection","id":"x"},7,null]}"#),
        ("no page numbers at all", #"{"results":[]}"#),
        ("a real page", ScriptedUpstream.moviePage),
    ])
    func storesATrendingPageWithAResultsArray(_ name: String, _ body: String) {
        #expect(validator.problem(with: Array(body.utf8), for: trending) == nil, "\(name)")
    }

    @Test(arguments: [
        ("empty", ""),
        ("not JSON", "<html>502 Bad Gateway</html>"),
        ("truncated", String(ScriptedUpstream.movieDetails.dropLast(10))),
        ("truncated in a string", #"{"id":550,"title":"Fight"#),
        ("truncated in an escape", #"{"id":550,"title":"\u00"#),
        ("data after the value", #"{"id":550} {"id":551}"#),
        ("a trailing comma", #"{"id":550,}"#),
        ("a leading zero", #"{"id":0550}"#),
        ("a bare control byte in a string", "{\"id\":550,\"title\":\"a\u{01}b\"}"),
        ("a lone high surrogate", #"{"id":550,"title":"\ud83c"}"#),
        ("a lone low surrogate", #"{"id":550,"title":"\udfac"}"#),
        ("an unknown escape", #"{"id":550,"title":"\x41"}"#),
        ("NaN", #"{"id":550,"vote_average":NaN}"#),
        ("single quotes", #"{'id':550}"#),
        ("an array", "[550]"),
        ("a string", #""550""#),
        ("another movie", #"{"id":5,"title":"Star Wars"}"#),
        ("another movie whose id starts alike", #"{"id":5500}"#),
        ("a movie id that is not a plain integer", #"{"id":550.0}"#),
        ("no id", #"{"title":"Fight Club"}"#),
        ("two ids", #"{"id":550,"id":5}"#),
        (
            "an error object sent with 200",
            #"{"success":false,"status_code":34,"status_message":"The resource could not be found."}"#
        ),
        ("an error object that also has the id", #"{"id":550,"success":false,"status_code":7}"#),
    ])
    func refusesAMovieBodyThatWouldBeUselessToStore(_ name: String, _ body: String) {
        #expect(validator.problem(with: Array(body.utf8), for: movie) != nil, "\(name)")
    }

    /// Each shape of the route table is checked as the route's entry says: a list has its
    /// results, a show or a person is the one asked for, a genre list has its genres.
    @Test(arguments: [
        (Route.movieList(.popular), #"{"page":1,"results":[]}"#, true),
        (.movieList(.upcoming), #"{"page":1,"dates":{}}"#, false),
        (.searchMovie, #"{"page":1,"results":[],"total_pages":1,"total_results":0}"#, true),
        (.tv(id: 1396), #"{"id":1396,"name":"Breaking Bad"}"#, true),
        (.tv(id: 1396), #"{"id":1399,"name":"Game of Thrones"}"#, false),
        (.person(id: 287), #"{"id":287,"name":"Brad Pitt"}"#, true),
        (.person(id: 287), #"{"name":"Brad Pitt"}"#, false),
        (.movieGenres, #"{"genres":[{"id":18,"name":"Drama"}]}"#, true),
        (.movieGenres, #"{"results":[]}"#, false),
    ])
    func eachShapeOfTheTableIsChecked(route: Route, body: String, usable: Bool) {
        #expect((validator.problem(with: Array(body.utf8), for: route) == nil) == usable, "\(route) \(body)")
    }

    @Test func refusesBytesThatAreNotUTF8() {
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let body = Array(#"{"id":550,"title":""#.utf8) + bad + Array(#""}"#.utf8)
            #expect(validator.problem(with: body, for: movie) != nil, "\(bad)")
        }
    }

    @Test(arguments: [
        ("no results", #"{"page":1,"total_pages":1}"#),
        ("results as an object", #"{"page":1,"results":{"0":{"id":550}}}"#),
        ("a bare array", "[]"),
        (
            "an error object sent with 200",
            #"{"status_code":25,"status_message":"Your request count is over the allowed limit.","success":false}"#
        ),
    ])
    func refusesATrendingBodyThatWouldBeUselessToStore(_ name: String, _ body: String) {
        #expect(validator.problem(with: Array(body.utf8), for: trending) != nil, "\(name)")
    }

    @Test(arguments: [
        ("amodb's answer", ScriptedUpstream.configuration),
        ("images of a new shape", #"{"images":{"base_url":{"http":"x"}},"change_keys":"all"}"#),
        ("images alone", #"{"images":{}}"#),
    ])
    func storesAConfigurationWithAnImagesObject(_ name: String, _ body: String) {
        #expect(validator.problem(with: Array(body.utf8), for: .configuration) == nil, "\(name)")
    }

    @Test(arguments: [
        ("no images", #"{"change_keys":["title"]}"#),
        ("images as an array", #"{"images":["https://img.amodb.dev/t/p/"]}"#),
        ("images as a string", #"{"images":"https://img.amodb.dev/t/p/"}"#),
        ("images null", #"{"images":null}"#),
        ("a nested images object only", #"{"config":{"images":{}}}"#),
        ("a bare array", #"[{"images":{}}]"#),
        ("an error object sent with 200", #"{"images":{},"success":false,"status_code":7}"#),
    ])
    func refusesAConfigurationWithoutAnImagesObject(_ name: String, _ body: String) {
        #expect(validator.problem(with: Array(body.utf8), for: .configuration) != nil, "\(name)")
    }

    @Test func refusesNestingDeeperThanAppsCanDecodeWithoutExhaustingTheStack() {
        let deep =
            #"{"id":550,"x":"# + String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000) + "}"
        #expect(validator.problem(with: Array(deep.utf8), for: movie)?.contains("nested deeper") == true)
        let fine = #"{"id":550,"x":"# + String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + "}"
        #expect(validator.problem(with: Array(fine.utf8), for: movie) == nil)
    }

    @Test(arguments: [
        ("plainly", ProxyHarness.key),
        ("every character escaped", unicodeEscaped(ProxyHarness.key)),
        ("one character escaped", "test-secret\\u002dkey-0123456789"),
        (
            "upper-case escapes",
            unicodeEscaped(ProxyHarness.key).uppercased().replacingOccurrences(of: "\\U", with: "\\u")
        ),
    ])
    func refusesTheKeyHoweverItIsWritten(_ how: String, _ spelled: String) {
        let body = #"{"id":550,"title":"Fight Club","overview":"x \#(spelled) y"}"#
        #expect(validator.problem(with: Array(body.utf8), for: movie)?.contains("API key") == true, "\(how)")
        let asName = #"{"id":550,"\#(spelled)":1}"#
        #expect(
            validator.problem(with: Array(asName.utf8), for: movie)?.contains("API key") == true,
            "\(how), as a member name")
    }

    @Test func refusesAKeyWithASlashWrittenAsAnEscapedSlash() {
        let slashed = AnswerValidator(key: Secret("abc/def+ghi/jkl=="))
        let body = #"{"results":[{"overview":"abc\/def+ghi\/jkl=="}]}"#
        #expect(slashed.problem(with: Array(body.utf8), for: trending)?.contains("API key") == true)
        #expect(slashed.problem(with: Array(#"{"results":[{"overview":"abc\/def+ghi"}]}"#.utf8), for: trending) == nil)
    }

    @Test func acceptsOnlyTheProxysOwnErrorObjectAsAStored404() {
        #expect(
            validator.problem(
                withNotFound: APIRefusal.notFound.response.body) == nil)
        #expect(validator.problem(withNotFound: Array(ScriptedUpstream.movieDetails.utf8)) != nil)
        #expect(
            validator.problem(
                withNotFound: Array(
                    #"{"success":false,"status_code":34,"status_message":"\#(unicodeEscaped(ProxyHarness.key))"}"#.utf8)
            ) != nil)
    }
}
