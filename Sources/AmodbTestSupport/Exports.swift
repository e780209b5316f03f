// The helpers every socket test uses (raw client, `eventually`, `offloaded`, `withServer`)
// live in AmodbHTTPTestSupport, which the server's own tests use without the proxy; every
// user of AmodbTestSupport gets them too.
@_exported public import AmodbHTTPTestSupport
