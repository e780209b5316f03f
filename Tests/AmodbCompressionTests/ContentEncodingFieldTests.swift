import AmodbCompression
import Testing

struct ContentEncodingFieldTests {
    @Test(arguments: [
        ("gzip", ContentCoding.gzip), ("GZIP", .gzip), (" x-gzip\t", .gzip), ("X-Gzip", .gzip), ("br", .br),
        ("Br", .br),
        ("", .identity), ("identity", .identity), ("IDENTITY", .identity), ("  ", .identity),
    ])
    func readsTheCodingAmodbSentIn(value: String, coding: ContentCoding) {
        #expect(ContentCoding(contentEncoding: value) == coding)
    }

    @Test(arguments: ["deflate", "zstd", "compress", "gzip, br", "br,gzip", "gzip;q=1", "gzi", "brotli"])
    func refusesACodingItCannotDecode(value: String) {
        #expect(ContentCoding(contentEncoding: value) == nil)
    }
}
