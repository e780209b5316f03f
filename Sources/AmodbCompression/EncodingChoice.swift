/// What to send a client, given its `Accept-Encoding` and the codings an answer has.
public enum EncodingChoice: Sendable, Hashable {
    /// Send the answer in this coding.
    case send(ContentCoding)
    /// No coding the answer has is acceptable to the client: it refused identity
    /// (`identity;q=0`, or `*;q=0` without naming identity) and accepts none of the
    /// compressed variants.
    ///
    /// Recommended answer: **406 Not Acceptable** with a JSON `status_message`. RFC 9110
    /// §12.5.3 makes identity acceptable unless excluded, so this only happens when
    /// the client said, explicitly, that it cannot take the bytes we have; sending
    /// them anyway (which §12.1 also permits) would hand it a body it said it cannot
    /// read. The proxy's own short errors, which have no variants, may still go out as
    /// identity: the client learns the failure either way.
    case notAcceptable
}
