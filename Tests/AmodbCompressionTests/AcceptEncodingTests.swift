import AmodbCompression
import Testing

/// One negotiation: the request's `Accept-Encoding` field values (`nil`: no field),
/// the codings the answer has, and what to send.
struct NegotiationCase: Sendable, CustomTestStringConvertible {
    let name: String
    let fieldValues: [String]?
    let available: ContentCodingSet
    let expected: EncodingChoice

    init(_ name: String, _ fieldValues: [String]?, available: ContentCodingSet = .all, _ expected: EncodingChoice) {
        self.name = name
        self.fieldValues = fieldValues
        self.available = available
        self.expected = expected
    }

    var testDescription: String { name }

    var acceptEncoding: AcceptEncoding {
        fieldValues.map { AcceptEncoding(fieldValues: $0) } ?? AcceptEncoding()
    }
}

struct AcceptEncodingTests {
    static let common: [NegotiationCase] = [
        NegotiationCase("no field gets identity", nil, .send(.identity)),
        NegotiationCase("an empty field gets identity", [""], .send(.identity)),
        NegotiationCase("a field of only commas and spaces gets identity", [" , ,\t"], .send(.identity)),
        NegotiationCase("URLSession's header gets br", ["gzip, deflate, br"], .send(.br)),
        NegotiationCase("OkHttp's header gets gzip", ["gzip"], .send(.gzip)),
        NegotiationCase("curl --compressed gets br", ["deflate, gzip, br, zstd"], .send(.br)),
        NegotiationCase("a browser-style list with weights gets br", ["br;q=1.0, gzip;q=0.8, *;q=0.1"], .send(.br)),
        NegotiationCase(
            "only codings the proxy does not make get identity", ["deflate, compress, zstd"], .send(.identity)),
    ]

    static let weights: [NegotiationCase] = [
        NegotiationCase("a higher q beats the preference for br", ["gzip;q=1.0, br;q=0.9"], .send(.gzip)),
        NegotiationCase("q compares to the third decimal", ["br;q=0.5, gzip;q=0.501"], .send(.gzip)),
        NegotiationCase("equal q prefers br over gzip", ["gzip;q=0.7, br;q=0.7"], .send(.br)),
        NegotiationCase("equal q prefers gzip over identity", ["identity;q=0.5, gzip;q=0.5"], .send(.gzip)),
        NegotiationCase("a listed identity with a higher q wins", ["identity, gzip;q=0.5, br;q=0.5"], .send(.identity)),
        NegotiationCase("the smallest q above zero still beats an unlisted identity", ["gzip;q=0.001"], .send(.gzip)),
        NegotiationCase("q=0 refuses a coding", ["br;q=0, gzip"], .send(.gzip)),
        NegotiationCase("q=0.000 refuses a coding too", ["gzip;q=0.000, br;q=0"], .send(.identity)),
        NegotiationCase("q=1. and q=1.000 are 1", ["gzip;q=1., br;q=0.999"], .send(.gzip)),
        NegotiationCase("q=0. is zero", ["br;q=0., gzip;q=0.1"], .send(.gzip)),
        NegotiationCase("spaces around the semicolon are allowed", [" gzip ;  q=0.5 ,\tbr\t;q=0.4 "], .send(.gzip)),
        NegotiationCase("empty members are skipped", [",,, gzip ,,"], .send(.gzip)),
    ]

    static let names: [NegotiationCase] = [
        NegotiationCase("names ignore case", ["GZIP"], .send(.gzip)),
        NegotiationCase("mixed-case br", ["Br"], .send(.br)),
        NegotiationCase("an upper-case Q is a weight", ["gZiP;Q=0.5, BR;q=0.4"], .send(.gzip)),
        NegotiationCase("x-gzip means gzip", ["x-gzip"], .send(.gzip)),
        NegotiationCase("X-GZIP with weights", ["X-GZIP;q=0.9, br;q=0.8"], .send(.gzip)),
        NegotiationCase("a longer name is another coding", ["gzipx, brotli, br2"], .send(.identity)),
        NegotiationCase("* takes the preferred coding", ["*"], .send(.br)),
        NegotiationCase("* covers the codings not listed", ["*;q=0.5, br;q=0.4"], .send(.gzip)),
        NegotiationCase("* below a listed identity", ["identity, *;q=0.5"], .send(.identity)),
    ]

    static let refusals: [NegotiationCase] = [
        NegotiationCase("identity;q=0 alone leaves nothing", ["identity;q=0"], .notAcceptable),
        NegotiationCase("identity;q=0 with gzip gets gzip", ["identity;q=0, gzip"], .send(.gzip)),
        NegotiationCase("Identity;Q=0 in capitals refuses identity", ["Identity;Q=0"], .notAcceptable),
        NegotiationCase("*;q=0 without identity refuses it", ["*;q=0"], .notAcceptable),
        NegotiationCase("*;q=0 with identity listed keeps it", ["*;q=0, identity"], .send(.identity)),
        NegotiationCase(
            "*;q=0 with identity;q=0.5 and gzip;q=0.4", ["*;q=0, identity;q=0.5, gzip;q=0.4"], .send(.identity)),
        NegotiationCase("identity;q=0 with * takes br", ["identity;q=0, *;q=0.1"], .send(.br)),
        NegotiationCase(
            "identity refused, only identity available", ["identity;q=0, br"], available: .identity, .notAcceptable),
        NegotiationCase(
            "identity refused, br wanted, gzip available", ["identity;q=0, br"], available: [.identity, .gzip],
            .notAcceptable),
    ]

    static let duplicates: [NegotiationCase] = [
        NegotiationCase("two fields are one list", ["gzip;q=0.5", "br;q=0.4"], .send(.gzip)),
        NegotiationCase("a second field can add the preferred coding", ["gzip", "br"], .send(.br)),
        NegotiationCase("a coding listed twice takes its highest q", ["br;q=0.7, br;q=0, gzip;q=0.6"], .send(.br)),
        NegotiationCase("the same across fields", ["gzip;q=0.2, br;q=0.3", "gzip;q=0.9"], .send(.gzip)),
        NegotiationCase("gzip and x-gzip are one coding", ["x-gzip;q=0, gzip;q=0.4, br;q=0.3"], .send(.gzip)),
        NegotiationCase("identity refused then accepted is accepted", ["identity;q=0", "identity"], .send(.identity)),
        NegotiationCase("an empty field beside a real one", ["", "gzip"], .send(.gzip)),
    ]

    static let malformed: [NegotiationCase] = [
        NegotiationCase("q above 1 drops the member", ["gzip;q=2"], .send(.identity)),
        NegotiationCase("q=1.001 drops the member", ["gzip;q=1.001"], .send(.identity)),
        NegotiationCase("four decimals drop the member", ["gzip;q=0.1234"], .send(.identity)),
        NegotiationCase("a negative q drops the member", ["gzip;q=-0.5"], .send(.identity)),
        NegotiationCase("an empty q drops the member", ["gzip;q="], .send(.identity)),
        NegotiationCase("q=.5 drops the member", ["gzip;q=.5"], .send(.identity)),
        NegotiationCase("a quoted q drops the member", ["gzip;q=\"0.5\""], .send(.identity)),
        NegotiationCase("spaces around = drop the member", ["gzip;q = 0.5"], .send(.identity)),
        NegotiationCase("another parameter drops the member", ["gzip;level=9"], .send(.identity)),
        NegotiationCase("a parameter after q drops the member", ["gzip;q=0.5;x=1"], .send(.identity)),
        NegotiationCase("a weight without a semicolon drops the member", ["gzip q=0.5"], .send(.identity)),
        NegotiationCase("a bare semicolon drops the member", ["br;"], .send(.identity)),
        NegotiationCase("a missing name drops the member", [";q=0.5"], .send(.identity)),
        NegotiationCase("a malformed member leaves the others", ["br;q=abc, gzip"], .send(.gzip)),
        NegotiationCase("a malformed refusal does not refuse", ["identity;q=zero"], .send(.identity)),
        NegotiationCase("a malformed *;q=0 does not refuse identity", ["*;q=00"], .send(.identity)),
        NegotiationCase("a malformed gzip falls back to *", ["gzip;q=x, *;q=0.5, br;q=0.1"], .send(.gzip)),
        NegotiationCase("a quoted comma splits into junk", ["gzip;x=\"a,br\""], .send(.identity)),
    ]

    static let availability: [NegotiationCase] = [
        NegotiationCase(
            "a small answer without variants goes as identity", ["gzip, deflate, br"], available: .identity,
            .send(.identity)),
        NegotiationCase("br wanted, only gzip made", ["gzip, br"], available: [.identity, .gzip], .send(.gzip)),
        NegotiationCase(
            "no field and no identity bytes takes the preferred variant", nil, available: [.gzip, .br], .send(.br)),
        NegotiationCase(
            "an empty field and no identity bytes is not acceptable", [""], available: [.gzip, .br], .notAcceptable),
    ]

    @Test(arguments: common + weights + names)
    func negotiatesTheCodingTheClientPrefers(_ example: NegotiationCase) {
        #expect(example.acceptEncoding.negotiate(available: example.available) == example.expected)
    }

    @Test(arguments: refusals + duplicates)
    func honoursRefusalsAndRepeatedMembers(_ example: NegotiationCase) {
        #expect(example.acceptEncoding.negotiate(available: example.available) == example.expected)
    }

    @Test(arguments: malformed)
    func treatsAMalformedMemberAsAbsent(_ example: NegotiationCase) {
        #expect(example.acceptEncoding.negotiate(available: example.available) == example.expected)
    }

    @Test(arguments: availability)
    func choosesOnlyAmongTheCodingsTheAnswerHas(_ example: NegotiationCase) {
        #expect(example.acceptEncoding.negotiate(available: example.available) == example.expected)
    }

    @Test
    func readsFieldValuesGivenAsBytesTheSameAsText() {
        var fromBytes = AcceptEncoding()
        fromBytes.add(fieldValue: Array("gzip;q=0.9, br;q=0.8".utf8))
        #expect(fromBytes == AcceptEncoding(fieldValues: ["gzip;q=0.9, br;q=0.8"]))
        #expect(fromBytes.negotiate() == .send(.gzip))
    }

    @Test(
        "A request's fields are read for the Accept-Encoding ones, names in any case",
        arguments: [
            ([("Host", "a"), ("Accept-Encoding", "br")], ["br"]),
            ([("ACCEPT-ENCODING", "gzip"), ("accept-encoding", "identity;q=0")], ["gzip", "identity;q=0"]),
            ([("aCcEpT-eNcOdInG", "br;q=0")], ["br;q=0"]),
            (
                [
                    ("Accept-Encodings", "br"), ("Accept-Encodin", "br"), ("X-Accept-Encoding", "br"),
                    ("Accept_Encoding", "br"),
                ], nil
            ),
            ([("Accept-Éncoding", "br"), ("Accept-Encoding\u{301}", "br")], nil),
            ([("Accept-Encoding", "")], [""]),
            ([], nil),
        ])
    func readsTheAcceptEncodingFieldsOfARequest(fields: [(name: String, value: String)], values: [String]?) {
        #expect(AcceptEncoding(fields: fields) == (values.map { AcceptEncoding(fieldValues: $0) } ?? AcceptEncoding()))
    }

    @Test
    func dropsAMemberWithBytesOutsideATokenAndKeepsTheRest() {
        var acceptEncoding = AcceptEncoding()
        acceptEncoding.add(fieldValue: Array("gzip".utf8) + [0xFF] + Array(", deflate".utf8))
        #expect(acceptEncoding.negotiate() == .send(.identity))
        acceptEncoding.add(fieldValue: [0x00, 0x2C, 0x62, 0x72])  // NUL, ",br"
        #expect(acceptEncoding.negotiate() == .send(.br))
    }

    /// The values clients send on every request are read from a table made by the same
    /// parser: each must read exactly as parsing it does (here, parsed after an empty field,
    /// which adds nothing but is not the table's case), as must values that nearly match one.
    @Test(arguments: [
        "gzip, deflate, br", "gzip", "gzip, deflate", "br, gzip, deflate", "gzip, deflate, br, zstd",
        "deflate, gzip, br, zstd", "deflate, gzip", "identity", "gzip, deflate, b", "gzip, deflate, br ", "GZIP",
        "identity;q=0", "br", "",
    ])
    func aWellKnownValueReadsAsItParses(value: String) {
        let read = AcceptEncoding(fieldValues: [value])
        #expect(read == AcceptEncoding(fieldValues: ["", value]))
        #expect(read == AcceptEncoding(fields: [(name: "Accept-Encoding", value: value)]))
        for available in [ContentCodingSet.all, .identity, [.identity, .gzip], [.gzip, .br]] {
            #expect(
                read.negotiate(available: available)
                    == AcceptEncoding(fieldValues: ["", value]).negotiate(available: available))
        }
    }

    /// Reordering the members of a list cannot change the answer: weights combine by
    /// their maximum and ties break by a fixed preference. Every list of three members
    /// from a vocabulary of valid and malformed ones, in three orders and split across
    /// fields, against every set of codings.
    @Test
    func ignoresTheOrderOfMembers() {
        let vocabulary = [
            "gzip", "br", "identity", "*", "x-gzip", "deflate", "GZIP", "Br", "gzip;q=0", "br;q=0.5",
            "identity;q=0", "*;q=0", "*;q=0.3", "gzip;q=0.5", "br;q=1.0", "gzip;q=1.5", "br;q=", "identity;q=0.2",
            "gzip;q=0.500", "br ;q=0.25", "zstd;q=0.9", "gzip;level=1", "",
        ]
        let sets: [ContentCodingSet] = [.all, .identity, [.identity, .gzip], [.identity, .br], [.gzip, .br]]
        for first in vocabulary {
            for second in vocabulary {
                for third in vocabulary {
                    let forward = AcceptEncoding(fieldValues: ["\(first), \(second), \(third)"])
                    let backward = AcceptEncoding(fieldValues: ["\(third),\(second),\(first)"])
                    let split = AcceptEncoding(fieldValues: [second, third, first])
                    for available in sets {
                        let choice = forward.negotiate(available: available)
                        let list = "\(first), \(second), \(third)"
                        #expect(backward.negotiate(available: available) == choice, "\(list)")
                        #expect(split.negotiate(available: available) == choice, "\(list)")
                        if case .send(let coding) = choice {
                            #expect(available.contains(coding), "\(list)")
                        }
                    }
                }
            }
        }
    }
}
