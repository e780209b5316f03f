#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A system library opened at run time with dlopen(3) rather than linked: building then
/// needs none of its headers (no `-dev` package), and a machine without it learns which
/// package to install instead of failing to start the binary at all.
///
/// A library once opened stays open for the life of the process (it is never dlclose(3)d),
/// so the functions taken from it stay valid. dlopen and dlsym may be called from any
/// thread, and a handle is only read after it is opened.
public struct DynamicLibrary: @unchecked Sendable {
    /// The file that was opened, such as `libcrypto.so.3`.
    public let fileName: String
    /// The Debian package that installs it, named in errors.
    public let package: String
    private let handle: UnsafeMutableRawPointer

    /// Opens the first of `fileNames` that loads (sonames, found as the dynamic linker finds
    /// any library), or throws naming `package` and what dlopen said for the first name.
    ///
    /// A name is a soname, never a path: dlopen(3) then searches only the executable's run
    /// path, `LD_LIBRARY_PATH`, `/etc/ld.so.cache` and the system's directories, and the
    /// release binary's run path holds no `$ORIGIN` (scripts/build-release.sh), so a file
    /// dropped beside the binary is never the one opened.
    public init(fileNames: [String], package: String) throws(DynamicLibraryError) {
        precondition(!fileNames.isEmpty, "a library needs at least one file name")
        precondition(fileNames.allSatisfy { !$0.contains("/") }, "a library is opened by its soname, not a path")
        var firstFailure: String?
        for fileName in fileNames {
            // RTLD_NOW: a symbol the library itself lacks fails here, not at a later call;
            // RTLD_LOCAL: its symbols do not resolve anyone else's.
            if let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) {
                self.fileName = fileName
                self.package = package
                self.handle = handle
                return
            }
            // dlerror(3) is per thread and read at once, before another dl call replaces it.
            let said = dlerror().map { String(cString: $0) } ?? "\(fileName) did not load"
            firstFailure = firstFailure ?? said
        }
        throw DynamicLibraryError(
            "needs \(package) (\(fileNames[0])): apt-get install \(package) (dlopen: \(firstFailure ?? "?"))")
    }

    /// The C function `name` in this library, as the function type `Function` (a
    /// `@convention(c)` type that must match the function's C declaration: nothing can
    /// check it here).
    public func function<Function>(_ name: String, as type: Function.Type = Function.self)
        throws(DynamicLibraryError) -> Function
    {
        precondition(
            MemoryLayout<Function>.size == MemoryLayout<UnsafeMutableRawPointer>.size,
            "\(name) must be taken as a @convention(c) function type")
        // Cleared first: a null symbol is not an error by itself; dlerror then tells.
        _ = dlerror()
        guard let address = dlsym(handle, name) else {
            let said = dlerror().map { String(cString: $0) } ?? "no such symbol"
            throw DynamicLibraryError(
                "needs \(name) from \(fileName), which this \(package) lacks: install a current \(package) (dlsym: \(said))"
            )
        }
        return unsafeBitCast(address, to: Function.self)
    }
}

/// A library or one of its functions could not be loaded: what is missing, the Debian
/// package to install, and what dlopen(3) or dlsym(3) said.
public struct DynamicLibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message, such as `needs libssl3 (libcrypto.so.3): apt-get install libssl3 (dlopen: …)`.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
