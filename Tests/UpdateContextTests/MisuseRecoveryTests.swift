import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// Recoverable misuse: each is reported once, naming the caller's line, and the documented recovery
/// happens. The test observer makes a debug build take the path a release build takes (no trap).
final class MisuseRecoveryTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    private var flags: [Bool] = []
    /// A misuse report: its message (without " (recovered)"), the caller's file and line.
    private struct Reported {
        let message: String
        let file: String
        let line: UInt
    }

    private let reports = NotificationCoalescing.Locked<[Reported]>([])
    private var previousHandler: (@Sendable (UpdateDiagnostics.Report) -> Void)?

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        flags = []
        context.onUpdate { [unowned self] in flags.append($0) }
        let reports = reports
        previousHandler = UpdateDiagnostics.handler
        UpdateDiagnostics.handler = { report in
            guard report.kind == .misuse, let site = report.callSite else { return }
            let message =
                report.message.hasSuffix(" (recovered)")
                ? String(report.message.dropLast(" (recovered)".count)) : report.message
            reports.withLock { $0.append(Reported(message: message, file: site.file, line: site.line)) }
        }
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = false  // debug builds take the release path
    }

    override func tearDown() {
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = true
        if let previousHandler { UpdateDiagnostics.handler = previousHandler }
    }

    private var reported: [Reported] { reports.withLock { $0 } }

    private func assertOneReport(
        mentioning text: String, atLine line: UInt, file: StaticString = #filePath, testLine: UInt = #line
    ) {
        let reports = reported
        XCTAssertEqual(reports.count, 1, "\(reports)", file: file, line: testLine)
        guard let report = reports.first else { return }
        XCTAssertTrue(report.message.contains(text), report.message, file: file, line: testLine)
        XCTAssertEqual(report.file, "UpdateContextTests/MisuseRecoveryTests.swift", file: file, line: testLine)
        XCTAssertEqual(report.line, line, "the report names the caller's line", file: file, line: testLine)
    }

    func testAnExtraResumeIsIgnored() {
        context.suspend()
        context.setNeedsUpdate()
        context.resume()
        XCTAssertEqual(flags, [false])
        let line: UInt = #line + 1
        context.resume()
        assertOneReport(mentioning: "resume() called more times than suspend()", atLine: line)
        XCTAssertFalse(context.isSuspended)
        // Still balanced afterwards: one suspend needs one resume.
        context.suspend()
        context.setNeedsUpdate(animated: true)
        scheduler.turn()
        XCTAssertEqual(flags, [false], "suspended: nothing delivered")
        context.resume()
        XCTAssertEqual(flags, [false, true])
    }

    func testUpdateOffTheMainThreadBecomesAnUpdateInTheNextCycle() {
        let context = context!
        let line: UInt = #line + 1
        onAnotherThread { context.update(animated: true) }
        assertOneReport(mentioning: "update(animated:) must be called on the main thread", atLine: line)
        XCTAssertEqual(flags, [], "not delivered on the wrong thread")
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(flags, [true], "delivered once, in the next main-thread cycle, with its flag")
        scheduler.turn()
        XCTAssertEqual(flags, [true])
    }

    /// Every main-thread API called off the main thread, with no scope, inside an animated scope and inside
    /// a non-animated one: one report, naming the API the caller used (not one the package calls inside);
    /// and the update APIs still deliver once, in the next cycle, carrying the scope's transaction and
    /// telling its completion once.
    func testEveryOffMainMisuseNamesItsAPIInEveryScope() {
        final class Owner: ViewUpdating, @unchecked Sendable {
            // @unchecked Sendable: handed to one background call at a time; read after it returned.
            let updateContext: ViewUpdatingContext
            var renders = 0
            init(_ scheduler: ManualScheduler) {
                updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            }
            func updateView(animated: Bool) { renders += 1 }
        }
        let calls: [(api: String, delivers: Bool, call: @Sendable (Owner) -> Void)] = [
            ("update(animated:)", true, { $0.updateContext.update(animated: true) }),
            ("update(transaction:)", true, { $0.updateContext.update(transaction: UpdateTransaction()) }),
            ("updateIfNeeded()", false, { $0.updateContext.updateIfNeeded() }),
            ("suspend()", false, { $0.updateContext.suspend() }),
        ]
        let scopes: [(name: String, animation: UpdateAnimation??)] = [
            ("no scope", nil), ("animated scope", .some(.default)), ("non-animated scope", .some(nil)),
        ]
        for (api, delivers, call) in calls {
            for (scopeName, animation) in scopes {
                reports.withLock { $0.removeAll() }
                let owner = Owner(scheduler)
                owner.updateContext.onUpdate { _ in }
                let completions = NotificationCoalescing.Locked(0)
                onAnotherThread {
                    if let animation {
                        var transaction = UpdateTransaction(animation: animation)
                        transaction.addCompletion { _ in completions.withLock { $0 += 1 } }
                        withUpdateTransaction(transaction) { call(owner) }
                    } else {
                        call(owner)
                    }
                }
                let messages = reported.map(\.message)
                XCTAssertEqual(messages.count, 1, "\(api), \(scopeName): \(messages)")
                XCTAssertTrue(
                    messages.first?.hasPrefix("ViewUpdatingContext.\(api) must be called on the main thread") == true,
                    "\(api), \(scopeName): \(messages)")
                _ = try? scheduler.runUntilIdle()
                spinMainLoop(timeout: 5) { animation == nil || completions.withLock { $0 } > 0 }
                if animation != nil {
                    XCTAssertEqual(completions.withLock { $0 }, 1, "\(api), \(scopeName): the scope's completion, once")
                }
                if delivers { XCTAssertGreaterThan(owner.updateContext.updaterCount, 0) }
            }
        }
    }

    func testUpdateIfNeededOffTheMainThreadIsIgnored() {
        let context = context!
        context.setNeedsUpdate()
        let line: UInt = #line + 1
        onAnotherThread { context.updateIfNeeded() }
        assertOneReport(mentioning: "updateIfNeeded() must be called on the main thread", atLine: line)
        XCTAssertEqual(flags, [])
        scheduler.turn()
        XCTAssertEqual(flags, [false], "what was pending is delivered at the end of the cycle")
    }

    func testSuspendAndResumeOffTheMainThreadAreIgnored() {
        let context = context!
        let line: UInt = #line + 1
        onAnotherThread { context.suspend() }
        assertOneReport(mentioning: "suspend() must be called on the main thread", atLine: line)
        XCTAssertFalse(context.isSuspended)
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(flags, [false])
        context.suspend()
        onAnotherThread { context.resume() }
        XCTAssertEqual(reported.count, 2)
        XCTAssertTrue(context.isSuspended, "a resume on the wrong thread ends nothing")
        context.resume()
        XCTAssertFalse(context.isSuspended)
    }

    /// Misuse is reported every time it happens, from any thread, and a report never changes what the
    /// context delivers (many threads, many extra resumes).
    func testReportsFromManyThreadsAreAllDeliveredToTheObserver() {
        let context = context!
        let group = DispatchGroup()
        for _ in 0..<200 { DispatchQueue.global().async(group: group) { context.updateIfNeeded() } }
        group.wait()
        XCTAssertEqual(reported.count, 200)
        for _ in 0..<100 { context.resume() }
        XCTAssertEqual(reported.count, 300)
        XCTAssertFalse(context.isSuspended)
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(flags, [false])
    }

    /// A frame rate out of range and `runUntilIdle(maxTurns:)` below 1 never stop a release build either:
    /// reported, and the rate clamped (not finite or not above 0: 60; above 1 000: 1 000), the turns at least 1.
    func testOutOfRangeRatesAndTurnCountsAreClampedAndReported() {
        var line: UInt = #line + 1
        XCTAssertEqual(FramePacedScheduler(framesPerSecond: 0).framesPerSecond, 60)
        assertOneReport(mentioning: "needs a rate above 0 and at most 1 000; got 0.0", atLine: line)
        reports.withLock { $0.removeAll() }
        line = #line + 1
        XCTAssertEqual(FramePacedScheduler(framesPerSecond: 5_000).framesPerSecond, 1_000)
        assertOneReport(mentioning: "got 5000.0", atLine: line)
        reports.withLock { $0.removeAll() }
        line = #line + 1
        XCTAssertEqual(FramePacedScheduler(framesPerSecond: .infinity).framesPerSecond, 60)
        assertOneReport(mentioning: "got inf", atLine: line)
        reports.withLock { $0.removeAll() }
        context.setNeedsUpdate()
        line = #line + 1
        XCTAssertEqual(try scheduler.runUntilIdle(maxTurns: 0), 1)
        assertOneReport(mentioning: "runUntilIdle(maxTurns:) needs maxTurns > 0 (got 0)", atLine: line)
        XCTAssertEqual(flags, [false])
        // Each report names the scheduler it is about.
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        _ = FramePacedScheduler(label: "ticker", framesPerSecond: 0)
        XCTAssertEqual(try ManualScheduler(label: "manual").runUntilIdle(maxTurns: 0), 0)
        XCTAssertEqual(recorder.all.filter { $0.kind == .misuse }.map(\.label), ["ticker", "manual"])
    }

    /// A number out of range never stops a shipping app: each is reported once, naming the caller's line, and
    /// clamped — a duration or delay that is negative or not finite to 0, a bounce into -1...1 (NaN to 0), a
    /// keyboard curve outside 0...15 to the keyboard's own, 7. (`.ci/run` runs this in a release build.)
    func testOutOfRangeAnimationNumbersAreClampedAndReported() {
        var line: UInt = #line + 1
        var animation = UpdateAnimation.keyboard(duration: 0.25, curve: 99)
        assertOneReport(mentioning: "curve must be a UIView.AnimationCurve raw value, 0...15 (got 99)", atLine: line)
        XCTAssertEqual(animation.curve, .keyboard(curve: 7))
        XCTAssertEqual(animation.duration, 0.25)
        reports.withLock { $0.removeAll() }
        line = #line + 1
        animation = UpdateAnimation.keyboard(duration: -1, curve: 7)
        assertOneReport(mentioning: "duration must be finite and not negative (got -1.0)", atLine: line)
        XCTAssertEqual(animation.duration, 0)
        reports.withLock { $0.removeAll() }
        line = #line + 1
        animation = UpdateAnimation.spring(duration: -1)
        assertOneReport(mentioning: "UpdateAnimation.spring(duration:bounce:): duration must be finite", atLine: line)
        XCTAssertEqual(animation.duration, 0)
        reports.withLock { $0.removeAll() }
        line = #line + 1
        animation = UpdateAnimation.spring(duration: 0.3, bounce: 1.5)
        assertOneReport(mentioning: "bounce must be finite and between -1 and 1 (got 1.5)", atLine: line)
        XCTAssertEqual(animation, .spring(duration: 0.3, bounce: 1))
        reports.withLock { $0.removeAll() }
        line = #line + 1
        animation = UpdateAnimation.spring(duration: 0.3, bounce: .nan)
        assertOneReport(mentioning: "bounce must be finite and between -1 and 1 (got nan)", atLine: line)
        XCTAssertEqual(animation, .spring(duration: 0.3, bounce: 0))
        reports.withLock { $0.removeAll() }
        line = #line + 1
        animation = UpdateAnimation.easeIn(duration: .infinity)
        assertOneReport(mentioning: "duration must be finite and not negative (got inf)", atLine: line)
        XCTAssertEqual(animation.duration, 0)
        reports.withLock { $0.removeAll() }
        line = #line + 1
        animation = UpdateAnimation.default.delay(.nan)
        assertOneReport(mentioning: "delay must be finite and not negative (got nan)", atLine: line)
        XCTAssertEqual(animation, .default)
        reports.withLock { $0.removeAll() }
        // The clamped animation still animates a delivery.
        context.setNeedsUpdate(transaction: UpdateTransaction(animation: .keyboard(duration: 0.2, curve: -3)))
        scheduler.turn()
        XCTAssertEqual(flags, [true])
    }
}
