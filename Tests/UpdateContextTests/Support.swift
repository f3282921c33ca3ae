import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Records deliveries: the flag, and whether it came on the main thread.
final class Deliveries: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var _flags: [Bool] = []
    private var _offMain = 0

    func record(_ animated: Bool) {
        lock.lock()
        defer { lock.unlock() }
        _flags.append(animated)
        if !Thread.isMainThread { _offMain += 1 }
    }

    var flags: [Bool] {
        lock.lock()
        defer { lock.unlock() }
        return _flags
    }

    var count: Int { flags.count }
    var offMainCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return _offMain
    }

    /// `n`/`a` per delivery, as the contract writes them.
    var letters: String { flags.map { $0 ? "a" : "n" }.joined() }
}

/// Runs the main run loop until `condition` holds or `timeout` passes.
func spinMainLoop(timeout: TimeInterval = 5, until condition: () -> Bool) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() && Date() < deadline {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
    }
}

/// Lets the main run loop turn a few times.
func turnMainLoop(_ count: Int = 3) {
    for _ in 0..<count {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.005))
    }
}

/// Plays a timeline written as in CONTRACT.md (see `PrecedenceRow`) on a context driven by a manual
/// scheduler, and fails the test when the updaters disagree or work is left pending at the end.
func play(
    _ timeline: String, defaultAnimated: Bool = false, updaters: Int = 1, file: StaticString = #filePath,
    line: UInt = #line
) -> String {
    let result = playTimeline(timeline, defaultAnimated: defaultAnimated, updaters: updaters)
    XCTAssertTrue(result.updatersAgree, "updaters got different flags in \(timeline)", file: file, line: line)
    XCTAssertTrue(result.endedIdle, "work left pending after \(timeline)", file: file, line: line)
    return result.written
}

typealias SendableLog = SharedLog

#if os(Linux) || os(macOS)  // Foundation's Process: not in iOS, tvOS, watchOS or visionOS
/// Runs one test of this test binary in a child process (on Linux), with `environment` added: a case that
/// must stop the program, or one that changes the process for good (`dispatchMain()`). Returns its exit
/// status and everything it wrote, or `nil` when it neither stopped nor returned in `timeout` seconds (it
/// is then terminated).
func runChildProcess(
    test: String, environment: [String: String], timeout: TimeInterval = 120
) throws -> (status: Int32, output: String)? {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = [test]
    // No backtrace (quicker, shorter): the message is what is checked.
    child.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        .merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
    // The output goes to a file, not a pipe: reading a pipe to its end waits for every copy of its
    // write end, which a sanitizer's runtime may keep open.
    let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("cvu-child-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
    let output = try FileHandle(forWritingTo: outputURL)
    defer { try? FileManager.default.removeItem(at: outputURL) }
    child.standardOutput = output
    child.standardError = output
    try child.run()
    let deadline = Date(timeIntervalSinceNow: timeout)
    while child.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    if child.isRunning {
        child.terminate()
        return nil
    }
    try output.close()
    return (child.terminationStatus, String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self))
}
#endif

/// Runs `body` with `value` on the main actor, from a test method that runs on the main thread (XCTest
/// runs them there) but is not isolated to the main actor: what a `@MainActor` API such as
/// `startUpdatingView()` needs. The value does not cross a thread: `assumeIsolated` runs in place, and stops
/// the test when called anywhere else.
func onMainActor<Value>(_ value: Value, _ body: @MainActor (Value) throws -> Void) rethrows {
    // nonisolated(unsafe): it runs on the calling thread, which `assumeIsolated` checks is the main actor's.
    nonisolated(unsafe) let value = value
    try MainActor.assumeIsolated { try body(value) }
}

extension ManualScheduler {
    /// Turns until none of `contexts` has an update pending, at most `limit` times; returns the turns taken
    /// (`limit` when they did not settle: an update loop).
    func settle(_ contexts: [ViewUpdatingContext], limit: Int = 50) -> Int {
        var turns = 0
        while contexts.contains(where: \.isUpdatePending), turns < limit {
            turn()
            turns += 1
        }
        return turns
    }
}

extension UpdateStateMachine {
    /// `setNeedsUpdate(animated: flag)` on the pure machine (default flag `false`).
    mutating func n(_ flag: Bool?) -> Action {
        request(.setNeedsUpdate(flag), defaultAnimated: false)
    }

    /// `request`, and when it delivers, the delivery's end (no updaters on the pure machine): the flag it
    /// delivered, if it did.
    mutating func play(_ request: UpdateRequest, defaultAnimated: Bool) -> Bool? {
        guard case .deliver(let delivery, _) = self.request(request, defaultAnimated: defaultAnimated) else {
            return nil
        }
        _ = deliveryEnded(inboxHasRequests: false)
        return delivery.animated
    }

    /// The end of a cycle (`updateIfNeeded()`), and the delivery's end: the flag it delivered, if it did.
    mutating func playEndOfCycle(defaultAnimated: Bool) -> Bool? {
        guard case .deliver(let delivery, _) = deliverDue(defaultAnimated: defaultAnimated) else { return nil }
        _ = deliveryEnded(inboxHasRequests: false)
        return delivery.animated
    }
}
