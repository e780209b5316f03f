/// The system's libcrypto, which every type here computes with, loaded at run time.
public enum CryptoLibrary {
    /// Loads libcrypto now (once per process), or throws saying which package to install
    /// (`needs libssl3 (libcrypto.so.3): apt-get install libssl3 …`). A program calls it
    /// when it starts, so that a machine without the library learns so at once: every
    /// other call here stops the process with that message where libcrypto is missing,
    /// since none of them has an answer without it.
    public static func load() throws(CryptoError) {
        _ = try LibCrypto.system.get()
    }
}
