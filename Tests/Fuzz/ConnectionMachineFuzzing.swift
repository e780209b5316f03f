// The connection state machine under the same inputs as the decoder: `run.sh` compiles
// this file with `RequestParserFuzzer.swift`, which calls `fuzzConnection` for every input
// and limit set. The input is read as `Connection` reads a socket (only what `readable`
// allows, in the planned pieces), answers come at once or later in a scrambled order,
// the kernel takes a few bytes at a time or none, and the client ends its side when the
// input is used up. The machine must ask for exactly the requests the decoder finds
// (up to a `Connection: close` or an error), answer them in order, keep its output within
// its bound, end by closing or lingering, and do nothing once closed.

import Dispatch
import Foundation

/// What the fuzzer's I/O stand-in saw.
private struct MachineRun {
    var asked: [(target: String, sequence: Int)] = []
    var refused: [Int] = []
    var owed: [Int] = []
    var wire: [UInt8] = []
    var readingPaused = false
    var waitingForWritable = false
    var halfClosed = false
    var closed = false
}

/// Runs the state machine over `input`; `expected` is the decoder's transcript of the whole input.
func fuzzConnection(
    _ input: [UInt8], chunks: [Int], limits: HTTPLimits,
    expectedTargets: [(target: String, keepAlive: Bool)], expectedError: Int?, seed: UInt64
) {
    var random = seed | 1
    func next(_ bound: Int) -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return Int(random % UInt64(bound))
    }
    let deferAnswers = next(2) == 0
    let kernelStep = [Int.max, 1, 7, 300][next(4)]
    var timeouts = HTTPTimeouts()
    timeouts.requestHeadSeconds = 1000
    timeouts.requestBodySeconds = 1000
    var clock: UInt64 = 1_000_000_000
    func now() -> DispatchTime {
        clock += 1_000_000
        return DispatchTime(uptimeNanoseconds: clock)
    }
    var machine = ConnectionStateMachine(limits: limits, timeouts: timeouts, openedAt: now())
    var run = MachineRun()
    var kernelRoom = kernelStep

    func perform(_ first: [ConnectionStateMachine.Action]) {
        var work = first
        var ready: [(sequence: Int, response: HTTPResponse)] = []
        var wantsWrite = false
        while true {
            for action in work {
                if run.closed { fail("an action after close: \(action)", input) }
                switch action {
                case .read, .discardInput: break
                case .respond(let sequence):
                    guard let request = machine.takeRequest(sequence) else {
                        fail("no request for sequence \(sequence)", input)
                    }
                    if let last = run.asked.last, sequence <= last.sequence {
                        fail("sequence \(sequence) after \(last.sequence)", input)
                    }
                    run.asked.append((request.target, sequence))
                    if deferAnswers {
                        run.owed.append(sequence)
                    } else {
                        ready.append((sequence, HTTPResponse(status: 200, body: Array("ok".utf8))))
                    }
                case .refused(let status): run.refused.append(status)
                case .write: wantsWrite = true
                case .waitForWritable: run.waitingForWritable = true
                case .stopWaitingForWritable: run.waitingForWritable = false
                case .pauseReading: run.readingPaused = true
                case .resumeReading: run.readingPaused = false
                case .armTimer: break
                case .shutdownWrite: run.halfClosed = true
                case .close: run.closed = true
                }
            }
            if machine.pendingOutput.unsentBytes > ConnectionStateMachine.maxUnsentBytes {
                fail("\(machine.pendingOutput.unsentBytes) bytes unsent", input)
            }
            if !ready.isEmpty {
                work = machine.responsesReady(&ready, at: now())
            } else if wantsWrite {
                wantsWrite = false
                let pending = machine.pendingOutput.bytes
                let taken = min(pending.count, kernelRoom)
                if taken == 0 {
                    work = machine.writeWouldBlock(at: now())
                } else {
                    run.wire += pending[..<taken]
                    kernelRoom -= taken
                    work = machine.didWrite(taken, at: now())
                }
            } else {
                return
            }
        }
    }

    perform(machine.start())
    var delivered = 0
    var pieces = chunks[...]
    var ended = false
    var steps = 0
    while !run.closed {
        steps += 1
        if steps > 1_000_000 { fail("no end after a million steps", input) }
        if !run.readingPaused, delivered < input.count {
            let actions = machine.readable()
            if case .discardInput? = actions.first { break }  // lingering: the rest is read and dropped
            guard case .read(let limit)? = actions.first else {
                perform(actions)
                if !run.readingPaused, !actions.isEmpty { fail("readable gave \(actions) while reading", input) }
                if actions.isEmpty { break }  // draining: nothing more is read
                continue
            }
            let size = max(1, min(pieces.popFirst() ?? input.count, input.count - delivered, limit))
            perform(machine.bytesRead(input[delivered..<(delivered + size)], at: now()))
            delivered += size
        } else if run.waitingForWritable || kernelRoom == 0 {
            kernelRoom = kernelStep  // the client read
            if run.waitingForWritable { perform([.write]) }
        } else if !run.owed.isEmpty {
            let index = next(run.owed.count)
            let sequence = run.owed.remove(at: index)
            var answer: [(sequence: Int, response: HTTPResponse)] = [
                (sequence, HTTPResponse(status: 200, body: Array("ok".utf8)))
            ]
            perform(machine.responsesReady(&answer, at: now()))
        } else if !ended, delivered == input.count || run.readingPaused {
            if run.readingPaused, delivered < input.count { break }  // paused for good: draining or refused
            ended = true
            perform(machine.endOfInput(at: now()))
        } else {
            break
        }
    }
    // Whatever is left owed is answered, and the kernel takes everything.
    while !run.closed, !run.owed.isEmpty {
        var answer: [(sequence: Int, response: HTTPResponse)] = [
            (run.owed.removeFirst(), HTTPResponse(status: 200, body: Array("ok".utf8)))
        ]
        perform(machine.responsesReady(&answer, at: now()))
    }
    kernelRoom = .max
    if !run.closed, !machine.pendingOutput.isEmpty { perform([.write]) }

    // The requests asked are the decoder's, up to the first that closes the connection.
    var expected: [String] = []
    for (target, keepAlive) in expectedTargets {
        expected.append(target)
        if !keepAlive { break }
    }
    let closesEarly = expected.count < expectedTargets.count || expectedTargets.last?.keepAlive == false
    if run.asked.map(\.target) != expected {
        fail("asked \(run.asked.map(\.target)), the decoder read \(expected)", input)
    }
    if closesEarly || expectedError == nil {
        if !run.refused.isEmpty { fail("refused \(run.refused) with no error before the close", input) }
    } else if run.refused != [expectedError!] {
        fail("refused \(run.refused), the decoder failed with \(expectedError!)", input)
    }
    let text = String(decoding: run.wire, as: UTF8.self)
    // Status lines: `HTTP/1.1 ` then three digits and a space (an error message may say "HTTP/1.1").
    let answers = text.components(separatedBy: "HTTP/1.1 ").dropFirst().filter {
        $0.utf8.count > 3 && $0.utf8.prefix(3).allSatisfy { (0x30...0x39).contains($0) }
            && $0.utf8.dropFirst(3).first == 0x20 && !$0.hasPrefix("100 ")
    }
    if answers.count != run.asked.count + run.refused.count {
        fail(
            "\(answers.count) answers on the wire for \(run.asked.count) requests and \(run.refused.count) refusals",
            input)
    }
    if !run.closed, !run.halfClosed, ended {
        fail("the input ended and everything was answered, yet the connection is open", input)
    }
    if !run.closed, !machine.pendingOutput.isEmpty { fail("output left unsent with room in the kernel", input) }
    perform(machine.deadlinePassed(at: DispatchTime(uptimeNanoseconds: clock + 10_000_000_000_000)))
    if !run.closed { fail("still open after every deadline passed", input) }
    if !machine.readable().isEmpty || !machine.bytesRead(input, at: now()).isEmpty {
        fail("actions after close", input)
    }
}
