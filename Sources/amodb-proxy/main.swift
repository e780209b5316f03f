import AmodbCompression
import AmodbCrypto
import AmodbPlanner
import AmodbProxy
import AmodbSandbox
import CSystemShims
import Dispatch
import Foundation
import Synchronization

/// Prints one line to standard error and exits.
func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("amodb-proxy: \(message)\n".utf8))
    exit(code)
}

// SIGTERM, SIGINT and SIGHUP are blocked in every thread (a thread inherits the mask of
// the one that starts it, so this comes before any thread starts) and taken by `sigwait`
// on the main thread at the end, which parks there: `dispatchMain()` would park it in
// `sigsuspend`, which valgrind cannot follow (Tests/Perf/instructions-per-hit.sh).
//
// What the parent handed down is reset first: exec keeps ignored dispositions and the
// blocked mask (a shell's `trap "" TERM`, a test runner's worker thread that blocks nearly
// everything), and a signal that is ignored is discarded, even for `sigwait`, so such a
// proxy could not be stopped. The mask is set, not added to: exactly these three blocked.
// Two malloc arenas, set before any thread starts: glibc gives threads that contend
// arenas of their own (up to eight per core), and memory freed in one is not reused by
// another. The event loops, Dispatch's workers, URLSession's threads and the log writers
// would otherwise keep megabytes of free heap each; the hit path allocates little.
// The mmap threshold is fixed at glibc's starting 128 KiB: otherwise each freed large
// block raises it, and the compressors' working memory (made once per stored answer)
// then comes from the heap, where it stays resident as free space between entries.
amodb_configure_malloc(2, 128 * 1024)

var handledSignals = sigset_t()
sigemptyset(&handledSignals)
for signalNumber in [SIGTERM, SIGINT, SIGHUP] {
    sigaddset(&handledSignals, signalNumber)
    signal(signalNumber, SIG_DFL)
}
pthread_sigmask(SIG_SETMASK, &handledSignals, nil)

let arguments = Array(CommandLine.arguments.dropFirst())
let command: Command
do {
    command = try ConfigurationLoader.load(arguments: arguments, environment: ProcessInfo.processInfo.environment)
} catch {
    fail(error.description, code: 2)
}

var configuration: ProxyConfiguration
switch command {
case .help:
    print(ConfigurationLoader.usage, terminator: "")
    exit(0)
case .version:
    print("amodb-proxy \(ConfigurationLoader.version)")
    exit(0)
case .checkConfig(let checked):
    print(ConfigurationLoader.describe(checked), terminator: "")
    // A name that is no setting is most likely one misspelled: the check fails on it.
    let unknown = ConfigurationLoader.unknownSettings(in: ProcessInfo.processInfo.environment)
    for (name, closest) in unknown {
        FileHandle.standardError.write(Data("amodb-proxy: \(name) is no setting; did you mean \(closest)?\n".utf8))
    }
    exit(unknown.isEmpty ? 0 : 2)
case .healthcheck(let checked):
    let done = DispatchSemaphore(value: 0)
    let healthy = Mutex(false)
    // Detached: top-level code runs on the main actor, and the main thread waits below.
    Task.detached {
        let result = await HealthCheck.run(configuration: checked)
        healthy.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    exit(healthy.withLock { $0 } ? 0 : 1)
case .plan(let planArguments):
    let options: PlanOptions
    do {
        switch try PlanOptions.command(arguments: planArguments) {
        case .help:
            print(ConfigurationLoader.usage, terminator: "")
            exit(0)
        case .replay(let read):
            options = read
        }
    } catch {
        fail(error.description, code: 2)
    }
    // A replay serves nothing and may run a while: SIGINT and SIGTERM stop it as they stop
    // any program (unblocked before the first thread starts, so every thread inherits it).
    pthread_sigmask(SIG_UNBLOCK, &handledSignals, nil)
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<Result<String, PlanReport.Failure>?>(nil)
    // Detached: top-level code runs on the main actor, and the main thread waits below.
    Task.detached {
        let result: Result<String, PlanReport.Failure>
        do throws(PlanReport.Failure) {
            result = .success(try await PlanReport.run(options))
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    switch outcome.withLock({ $0 }) {
    case .success(let report):
        print(report, terminator: "")
        exit(0)
    case .failure(let failure):
        fail(failure.description)
    case nil:
        fail("the replay ended without a report")
    }
case .serve(let loaded):
    configuration = loaded
}

// libcrypto is loaded at run time, not linked (so building needs no libssl-dev): a machine
// without it is told now which package to install, not at the first token it checks.
do throws(CryptoError) {
    try CryptoLibrary.load()
} catch {
    fail(error.description)
}

// The client tokens join the secrets scrubbed once they are read (`AppTokens`), from
// the setting and the file alike.
let logger = ProxyLogger(
    minimumLevel: configuration.logLevel, format: configuration.logFormat,
    secrets: [configuration.apiKey] + [configuration.jwtSecret].compactMap { $0 })
for (name, closest) in ConfigurationLoader.unknownSettings(in: ProcessInfo.processInfo.environment) {
    logger.warning(
        "\(name) is no setting and is ignored; did you mean \(closest)?", ["variable": name, "closest": closest])
}
var sandbox: AmodbSandbox?
if configuration.sandbox {
    // The built-in stand-in for amodb, on a loopback port of its own, with its own key.
    let standIn = AmodbSandbox()
    do {
        _ = try standIn.start(host: "127.0.0.1", port: 0)
    } catch {
        fail("cannot start the amodb sandbox: \(error)")
    }
    configuration.upstreamURL = standIn.baseURL
    configuration.apiKey = Secret(AmodbSandbox.Configuration().apiKey)
    sandbox = standIn
    logger.info("sandbox mode: amodb is the built-in stand-in", ["upstream": standIn.baseURL])
}

// brotli, too, is loaded at run time; without it answers go out in gzip or identity.
if let problem = ContentEncoder.brotliUnavailability {
    logger.warning("br answers are off: brotli is not installed; gzip and identity are sent", ["problem": problem])
}
// The calls to amodb of the last minute outlive this process in the state directory: a
// restart within a minute of a burst must not spend the window again.
var ledger: CallLedger?
if let directory = configuration.stateDirectory {
    do throws(CallLedger.LedgerError) {
        let opened = try CallLedger(directory: directory, now: SystemClock().now(), logger: logger)
        if opened.loaded.damaged {
            logger.warning(
                "the budget's ledger could not be read whole: its calls are unknown, so for a window and a call's time none is made on this replica's own (a lone replica's window, a fleet replica's reserve)",
                ["path": opened.path])
        }
        ledger = opened
    } catch  where configuration.stateDirectoryIsDefault {
        logger.warning(
            "the default state directory cannot be used: the calls to amodb of the last minute are kept in memory only, so a restart forgets them; set AMODB_STATE_DIR to a writable directory",
            ["problem": error.description])
    } catch {
        fail("\(error.description) (AMODB_STATE_DIR)")
    }
}
let proxy = ProxyServer(configuration: configuration, logger: logger, ledger: ledger)
let port: Int
do {
    port = try proxy.start()
} catch {
    LineWriter.standardError.flush()
    let (host, port) =
        error.isOperatorPort
        ? (configuration.operatorHost, configuration.operatorPort ?? 0) : (configuration.host, configuration.port)
    fail("cannot listen on \(host):\(port): \(error)")
}
/// Seconds as the log shows them: whole numbers without a fraction.
func logged(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}
logger.info(
    "amodb-proxy listening",
    [
        "address": "http://\(configuration.host):\(port)", "upstream": configuration.upstreamURL,
        "cache_ttl": logged(configuration.cacheTTL), "movie_ttl": logged(configuration.movieTTL),
        "configuration_ttl": logged(configuration.configurationTTL),
    ])
if let operatorPort = proxy.operatorPort {
    logger.info(
        "the operator's pages listen on their own port; the public port answers them 404",
        ["address": "http://\(configuration.operatorHost):\(operatorPort)", "pages": "/metrics, /status, /status.json"])
}
if configuration.sandbox {
    // For the person at the terminal, not for the access log on standard output.
    LineWriter.standardError.write(SandboxHint.line(for: configuration, port: port))
}

// Signals are handled on a queue of their own, so the main thread goes straight back to waiting.
let signalQueue = DispatchQueue(label: "amodb-proxy.signals")
let graceSeconds = configuration.shutdownGraceSeconds
let runningSandbox = sandbox

/// SIGTERM / SIGINT: stop accepting, finish what is in flight, exit 0.
func shutDown() {
    logger.info("shutting down", ["grace_seconds": String(graceSeconds)])
    Task {
        await proxy.shutdown()
        await runningSandbox?.shutdown()
        logger.info("stopped")
        LineWriter.standardOutput.flush()
        LineWriter.standardError.flush()
        exit(0)
    }
}

/// SIGHUP (its default action would kill the process, with no drain and no snapshot):
/// reload what can change while running, the log level (from the settings file; the
/// environment and flags still win) and the client tokens file, and say so. Every other
/// setting, the key included, takes effect at the next start.
func reload() {
    do {
        guard
            case .serve(let reloaded) = try ConfigurationLoader.load(
                arguments: arguments, environment: ProcessInfo.processInfo.environment)
        else { return }
        proxy.tokens.reloadIfChanged()
        logger.info(
            "SIGHUP: reloaded the log level and the client tokens file; other settings change at a restart",
            [
                "log_level": reloaded.logLevel.name, "previous_log_level": logger.minimumLevel.name,
                "client_tokens": String(proxy.tokens.count),
            ])
        logger.setMinimumLevel(reloaded.logLevel)
    } catch {
        logger.error("SIGHUP: the configuration does not load now; nothing changed", ["problem": "\(error)"])
    }
}

while true {
    var received: Int32 = 0
    guard sigwait(&handledSignals, &received) == 0 else { continue }
    switch received {
    case SIGHUP: signalQueue.async { reload() }
    default: signalQueue.async { shutDown() }
    }
}
