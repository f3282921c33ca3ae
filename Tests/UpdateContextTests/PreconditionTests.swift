import Foundation
import NotificationCoalescing
import UpdateContext
import XCTest

/// Bad input stops on a precondition that names it. Each case runs in a child process (this test binary,
/// run again with `CVU_TRAP_CASE` set, on Linux), which must die with the message on standard error.
final class PreconditionTests: XCTestCase {
    private static let cases = baseCases.merging(typedMessageCases) { $1 }

    private static let baseCases: [String: @Sendable () -> Void] = [
        // Numbers out of range, with no test observer: a debug build stops at the first (assertionFailure), a
        // release build reports each and goes on.
        "bad numbers": {
            _ = UpdateAnimation.linear(duration: -1)
            _ = UpdateAnimation.easeIn(duration: .infinity)
            _ = UpdateAnimation.default.delay(.nan)
            _ = UpdateAnimation.spring(duration: 0.3, bounce: 1.5)
            _ = UpdateAnimation.spring(duration: -1)
            _ = UpdateAnimation.keyboard(duration: 0.25, curve: 99)
        },
        // Unrecoverable misuse, each at the caller's line, in every build (`.ci/run` runs these in `-c release`).
        "non-main scheduler": {
            let scheduler = NotificationCoalescing.Locked<RunLoopScheduler?>(nil)
            let made = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                scheduler.withLock { $0 = .currentRunLoop }
                made.signal()
                Thread.sleep(forTimeInterval: 60)
            }
            made.wait()
            _ = ViewUpdatingContext(scheduler: scheduler.withLock { $0 }!, refreshEvents: [])
        },
        "nested modify": {
            let context = StateUpdatingContext(state: 0, scheduler: ManualScheduler(), refreshEvents: [])
            context.modify { _ in context.modify { $0 = 1 } }
        },
        "animator skips its block": {
            let context = ViewUpdatingContext(scheduler: ManualScheduler(), refreshEvents: [])
            let skipsItsBlock: (@escaping () -> Void) -> Void = { _ in }
            context.animateWithFlushedUpdates(using: skipsItsBlock, {})
        },
        "turn off its thread": {
            let scheduler = ManualScheduler()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                scheduler.turn()
                done.signal()
            }
            done.wait()
        },
        "scheduler turned on another thread": {
            // A manual scheduler created (and so turned) on another thread; startUpdatingView() on this one.
            let scheduler = NotificationCoalescing.Locked<ManualScheduler?>(nil)
            let made = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                scheduler.withLock { $0 = ManualScheduler() }
                made.signal()
                Thread.sleep(forTimeInterval: 60)
            }
            made.wait()
            let badge = ElsewhereBadge(scheduler: scheduler.withLock { $0 }!)
            onMainActor(badge) { $0.startUpdatingView() }
        },
    ]

    /// The child's entry point: runs the case named by `CVU_TRAP_CASE` (it must not return). Skipped in a
    /// normal run.
    func testTrapChild() throws {
        guard let name = ProcessInfo.processInfo.environment["CVU_TRAP_CASE"] else {
            throw XCTSkip("the child process's entry point for PreconditionTests")
        }
        Self.cases[name]?()
        print("CVU_TRAP_CASE \(name): returned")
    }

    private func assertTraps(
        _ name: String, mentioning expected: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        #if os(Linux)
        guard
            let (status, text) = try runChildProcess(
                test: "UpdateContextTests.PreconditionTests/testTrapChild", environment: ["CVU_TRAP_CASE": name])
        else {
            XCTFail("\(name): the child neither stopped nor returned in 120 s", file: file, line: line)
            return
        }
        XCTAssertFalse(text.contains("returned"), "\(name): the bad input was accepted", file: file, line: line)
        XCTAssertNotEqual(status, 0, "\(name): the child did not stop", file: file, line: line)
        XCTAssertTrue(
            text.contains(expected), "\(name): the message does not name the mistake:\n\(text.suffix(600))",
            file: file, line: line)
        #else
        throw XCTSkip("child processes of the test bundle are run on Linux")
        #endif
    }

    /// Misuse nothing sensible can follow stops every build — release too, where `precondition` loses its
    /// text — with a message naming the API and the caller's line (this file).
    func testUnrecoverableMisuseStopsWithItsMessageAtTheCallersLine() throws {
        let here = "UpdateContextTests/PreconditionTests.swift"
        try assertTraps("non-main scheduler", mentioning: "needs a scheduler whose turns are the main thread's cycles")
        try assertTraps("non-main scheduler", mentioning: here)
        try assertTraps("nested modify", mentioning: "StateUpdatingContext.modify called from inside its own body")
        try assertTraps("nested modify", mentioning: here)
        try assertTraps("animator skips its block", mentioning: "must call its animations block before it returns")
        try assertTraps("animator skips its block", mentioning: here)
        try assertTraps("turn off its thread", mentioning: "ManualScheduler.turn(mode:) must be called on the thread")
        try assertTraps("turn off its thread", mentioning: here)
        // On the main thread, with a context whose scheduler turns elsewhere: stopped at the call, saying so.
        try assertTraps(
            "scheduler turned on another thread",
            mentioning: "ElsewhereBadge.updateView(animated:) is @MainActor, but its context's scheduler, "
                + "ManualScheduler")
        try assertTraps("scheduler turned on another thread", mentioning: "turns on another thread than this one")
        try assertTraps("scheduler turned on another thread", mentioning: here)
    }

    /// A main-actor message posted by a manual scheduler turned on another thread stops at that turn, saying
    /// so (on a context whose scheduler is not the main thread's it posts from the main queue:
    /// `TypedMessageTests`).
    func testAMainActorMessageOffTheMainThreadStopsWithItsMessage() throws {
        guard !Self.typedMessageCases.isEmpty else { throw XCTSkip("this Foundation has no typed messages") }
        try assertTraps("main-actor message, turn off main", mentioning: "at a turn off the main thread")
    }

    /// Numbers out of range never stop a release build (a shipping app): the child reports each as misuse
    /// and runs to its end. A debug build stops at the first, naming it, as `assertionFailure` does.
    func testBadAnimationNumbersDoNotStopAReleaseBuild() throws {
        #if os(Linux)
        guard
            let (status, text) = try runChildProcess(
                test: "UpdateContextTests.PreconditionTests/testTrapChild",
                environment: ["CVU_TRAP_CASE": "bad numbers"])
        else { return XCTFail("the child neither stopped nor returned in 120 s") }
        #if DEBUG
        XCTAssertNotEqual(status, 0, "a debug build stops at the first bad number")
        XCTAssertTrue(text.contains("duration must be finite and not negative (got -1.0)"), String(text.suffix(600)))
        #else
        XCTAssertEqual(status, 0, String(text.suffix(600)))
        XCTAssertTrue(text.contains("CVU_TRAP_CASE bad numbers: returned"), String(text.suffix(600)))
        for message in [
            "duration must be finite and not negative (got -1.0)", "duration must be finite and not negative (got inf)",
            "delay must be finite and not negative (got nan)", "bounce must be finite and between -1 and 1 (got 1.5)",
            "curve must be a UIView.AnimationCurve raw value, 0...15 (got 99)",
        ] {
            XCTAssertTrue(text.contains(message), "\(message):\n\(text.suffix(600))")
        }
        XCTAssertEqual(text.components(separatedBy: "(recovered)").count - 1, 6, "each reported once, recovered")
        #endif
        #else
        throw XCTSkip("child processes of the test bundle are run on Linux")
        #endif
    }
}

/// A `ViewUpdating` object whose context's scheduler was made (and so turns) on another thread.
private final class ElsewhereBadge: ViewUpdating {
    let updateContext: ViewUpdatingContext
    init(scheduler: ManualScheduler) { updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: []) }
    func updateView(animated: Bool) {}
}

extension PreconditionTests {
    #if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))
    fileprivate static var typedMessageCases: [String: @Sendable () -> Void] {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return [:] }
        return [
            "main-actor message, turn off main": {
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    let scheduler = ManualScheduler()
                    let queue = NotificationCoalescingContext(scheduler: scheduler)
                    queue.enqueue(MailArrived(count: 1))
                    scheduler.turn()
                    done.signal()
                }
                done.wait()
            }
        ]
    }
    #else
    fileprivate static var typedMessageCases: [String: @Sendable () -> Void] { [:] }
    #endif
}
