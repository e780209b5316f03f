import AmodbDynamicLibrary
import Testing

@testable import AmodbCrypto

/// libcrypto, loaded at run time: here, where libssl3 is installed, and as a machine
/// without it would see it, through the loader given a file name that does not exist.
struct CryptoLibraryTests {
    @Test
    func loadsTheSystemsLibcrypto() throws {
        try CryptoLibrary.load()
        #expect(LibCrypto.fileNames == ["libcrypto.so.3"])
    }

    @Test
    func aMissingLibcryptoNamesThePackageToInstall() throws {
        do {
            _ = try LibCrypto(fileNames: ["libcrypto.so.0-missing"])
            Issue.record("a library that does not exist loaded")
        } catch {
            #expect(error.description.hasPrefix("needs libssl3 (libcrypto.so.0-missing): apt-get install libssl3"))
            #expect(
                error.description.contains("libcrypto.so.0-missing: cannot open shared object file"), "dlopen's words")
        }
    }

    @Test
    func aMissingFunctionNamesItAndThePackage() throws {
        let library = try DynamicLibrary(fileNames: LibCrypto.fileNames, package: LibCrypto.package)
        do {
            let _: @convention(c) () -> Void = try library.function("AMODB_NO_SUCH_FUNCTION")
            Issue.record("a function that does not exist was found")
        } catch {
            #expect(
                error.description.hasPrefix(
                    "needs AMODB_NO_SUCH_FUNCTION from libcrypto.so.3, which this libssl3 lacks"))
        }
    }

    @Test
    func laterFileNamesAreTriedWhenTheFirstIsMissing() throws {
        let library = try DynamicLibrary(fileNames: ["libcrypto.so.0-missing", "libcrypto.so.3"], package: "libssl3")
        #expect(library.fileName == "libcrypto.so.3")
    }
}
