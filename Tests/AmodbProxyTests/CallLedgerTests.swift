import Foundation
import Testing

@testable import AmodbProxy

/// The ledger of the last minute's calls: what a restarted replica reads back.
struct CallLedgerTests {
    @Test func aRestartReadsBackTheCallsOfTheLastWindowAndTheFleetsWindowSeen() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let ledger = try CallLedger(directory: directory, now: 1_000)
            #expect(!ledger.loaded.existed, "a new directory: the first start")
            ledger.granted("a", until: 1_010, reserve: false)
            ledger.granted("b", until: 1_011, reserve: true)
            ledger.completed("a", at: 1_002)
            ledger.granted("old", until: 900, reserve: false)
            ledger.saw(SharedBudget.Seen(epoch: "123-x", sequence: 7))
        }
        let again = try CallLedger(directory: directory, now: 1_020)
        #expect(again.loaded.existed)
        #expect(!again.loaded.damaged)
        #expect(
            again.loaded.calls == [
                CallLedger.Call(id: "a", until: 1_002, reserve: false),
                CallLedger.Call(id: "b", until: 1_011, reserve: true),
            ])
        #expect(again.loaded.seen == SharedBudget.Seen(epoch: "123-x", sequence: 7))
    }

    @Test(arguments: [
        "amodb-proxy budget calls v1\ng a 1000 f\ng b 10",  // cut off mid-line
        "amodb-proxy budget calls v1\ng a 1000 f\nx y\n",  // a line of no kind
        "amodb-proxy budget calls v1\ng a soon f\n",  // a time that is no number
        "something else\n",  // not a ledger
    ])
    func aLedgerThatCannotBeReadWholeIsDamaged(_ text: String) {
        #expect(CallLedger.read(text, now: 1, window: 60).damaged)
    }

    @Test func aDamagedLedgerClosesALoneReplicasWindowForAWindowAndACallsTime() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: directory + "/" + CallLedger.fileName))
        let ledger = try CallLedger(directory: directory, now: 1_000)
        #expect(ledger.loaded.damaged)
        let budget = UpstreamBudget(limit: 10, shares: nil, callTimeout: 12, ledger: ledger, now: 1_000)
        #expect(budget.acquire(.miss, now: 1_000) == .denied(retryAfter: 72))
        #expect(budget.acquire(.miss, now: 1_072.5) == .granted)
    }

    @Test func aLoneReplicaRestartedWithinAMinuteDoesNotSpendTheWindowAgain() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let budget = UpstreamBudget(
                limit: 3, shares: nil, callTimeout: 5, ledger: try CallLedger(directory: directory, now: 0), now: 0)
            for _ in 0..<3 { #expect(budget.acquire(.miss, now: 10) == .granted) }
            budget.completed(grantedAt: 10, now: 11, answered: true)
        }
        // Killed (nothing but the file survives) and started again 20 s later.
        let restarted = UpstreamBudget(
            limit: 3, shares: nil, callTimeout: 5, ledger: try CallLedger(directory: directory, now: 30), now: 30)
        #expect(restarted.used(now: 30) == 3)
        #expect(!restarted.acquire(.miss, now: 30).isGranted)
        // The one that came back counts from then; the two that did not, until their grant's end.
        #expect(restarted.acquire(.miss, now: 71.5) == .granted)
        #expect(!restarted.acquire(.miss, now: 71.5).isGranted)
        #expect(restarted.acquire(.miss, now: 75.5) == .granted)
    }

    @Test func aSecondProcessCannotUseTheSameLedger() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try CallLedger(directory: directory, now: 0)
        #expect(throws: CallLedger.LedgerError.self) { try CallLedger(directory: directory, now: 0) }
        withExtendedLifetime(first) {}
    }

    @Test func theFileIsRewrittenWithOnlyTheCallsStillInTheWindow() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = try CallLedger(directory: directory, now: 0, durable: false)
        for index in 0..<(CallLedger.rewriteAfter * 2) {
            ledger.granted("c\(index)", until: Double(index) / 1000, reserve: false)
        }
        ledger.granted("late", until: 1e12, reserve: false)
        ledger.rewrite(now: 100)
        let text = try String(contentsOfFile: ledger.path, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 2, "the header and the one call still in the window")
        ledger.granted("after", until: 1e12, reserve: true)
        #expect(
            CallLedger.read(try String(contentsOfFile: ledger.path, encoding: .utf8), now: 100, window: 60).calls.count
                == 2)
    }
}

private func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("amodb-ledger-\(UUID().uuidString)").path
}
