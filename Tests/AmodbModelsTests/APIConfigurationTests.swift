import AmodbModels
import Foundation
import Testing

@Suite("Decoding /configuration")
struct APIConfigurationTests {
    static let full = """
        {"images": {"base_url": "http://img.amodb.dev/t/p/", "secure_base_url": "https://img.amodb.dev/t/p/",
          "backdrop_sizes": ["w300", "w780", "w1280", "original"],
          "logo_sizes": ["w45", "w92", "w154", "w185", "w300", "w500", "original"],
          "poster_sizes": ["w92", "w154", "w185", "w342", "w500", "w780", "original"],
          "profile_sizes": ["w45", "w185", "h632", "original"],
          "still_sizes": ["w92", "w185", "w300", "original"]},
         "change_keys": ["adult", "title", "videos"]}
        """

    @Test func aFullAnswerDecodesEveryField() throws {
        let configuration = try Fixtures.decode(APIConfiguration.self, Self.full)
        #expect(
            configuration
                == APIConfiguration(
                    images: ImageConfiguration(
                        baseURL: "http://img.amodb.dev/t/p/", secureBaseURL: "https://img.amodb.dev/t/p/",
                        backdropSizes: ["w300", "w780", "w1280", "original"],
                        logoSizes: ["w45", "w92", "w154", "w185", "w300", "w500", "original"],
                        posterSizes: ["w92", "w154", "w185", "w342", "w500", "w780", "original"],
                        profileSizes: ["w45", "w185", "h632", "original"],
                        stillSizes: ["w92", "w185", "w300", "original"]),
                    changeKeys: ["adult", "title", "videos"]))
    }

    @Test func whatAmodbLeavesOutTakesItsDefault() throws {
        let configuration = try Fixtures.decode(
            APIConfiguration.self,
            #"{"images": {"secure_base_url": "https://i/", "poster_sizes": ["w92"], "still_sizes": null}}"#)
        #expect(configuration.changeKeys.isEmpty)
        #expect(configuration.images.baseURL == "https://i/", "the one base URL there is stands in for the other")
        #expect(configuration.images.posterSizes == ["w92"])
        #expect(configuration.images.backdropSizes.isEmpty)
        #expect(configuration.images.stillSizes.isEmpty)
    }

    @Test func onlyThePlainBaseURLServesForBoth() throws {
        let images = try Fixtures.decode(
            APIConfiguration.self, #"{"images": {"base_url": "http://i/", "secure_base_url": ""}}"#
        ).images
        #expect(images.secureBaseURL == "http://i/")
        #expect(images.baseURL == "http://i/")
    }

    @Test func unknownFieldsAreIgnored() throws {
        let json =
            #"{"images": {"base_url": "http://i/", "secure_base_url": "https://i/", "video_sizes": ["w1"], "x": {"y": 1}}, "new": [1]}"#
        #expect(try Fixtures.decode(APIConfiguration.self, json).images.secureBaseURL == "https://i/")
    }

    @Test(
        "Refused: nothing to build an image URL from",
        arguments: [
            #"{"change_keys": []}"#,
            #"{"images": null}"#,
            #"{"images": {"poster_sizes": ["w92"]}}"#,
            #"{"images": {"base_url": "", "secure_base_url": null}}"#,
            #"{"images": ["https://i/"]}"#,
        ])
    func withoutABaseURLItDoesNotDecode(json: String) {
        #expect(throws: DecodingError.self) { try Fixtures.decode(APIConfiguration.self, json) }
    }

    @Test func itSurvivesARoundTrip() throws {
        let configuration = try Fixtures.decode(APIConfiguration.self, Self.full)
        #expect(
            try JSONDecoder().decode(APIConfiguration.self, from: JSONEncoder().encode(configuration)) == configuration)
    }
}
