import Foundation

/// A scheduler you turn by hand, for tests: nothing is delivered until you call ``turn(mode:file:line:)``.
///
/// ```swift
/// import Foundation
/// import NotificationCoalescing
///
/// let scheduler = ManualScheduler()
/// let context = NotificationCoalescingContext(scheduler: scheduler)
/// context.enqueue(Notification(name: .init("a")))
/// context.enqueue(Notification(name: .init("a")))
/// scheduler.turn()            // "a" is posted once, here, on this thread
/// try scheduler.expectIdle()  // and nothing is left waiting
/// ```
///
/// Like swift-nio's `EmbeddedEventLoop` and swift-clocks' `TestClock`, it insists on idleness: end a
/// test with ``expectIdle()``, and ``runUntilIdle(mode:maxTurns:file:line:)`` throws when it gives up with work
/// still pending instead of returning quietly.
///
/// It stands in for the main thread (``CoalescingScheduler/isMainThreadScheduler`` is `true`), so a `ViewUpdatingContext`
/// accepts it; its updaters then run on the thread that turns it.
///
/// > Important: A manual scheduler belongs to the thread that creates it: turn it, and call
/// > synchronous APIs such as `.now` posts or `update()`, on that thread. Other threads may schedule
/// > work at any time; it waits for the next ``turn(mode:file:line:)``.
public final class ManualScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `commonModes` is immutable; `mode` is written and read only on the owner
    // thread (turns assert it, and `currentMode` answers `nil` elsewhere).
    private let commonModes: Set<RunLoop.Mode>
    private nonisolated(unsafe) var mode: RunLoop.Mode?
    /// The diagnostics' clock, in nanoseconds: moved only by ``advanceClock(by:file:line:)`` (any thread reads it).
    private let clock = Locked<UInt64>(1)

    /// Work was still waiting when a manual scheduler was expected to be idle.
    public struct NotIdle: Error, CustomStringConvertible {
        /// How many turns were run before giving up (0 for ``ManualScheduler/expectIdle()``).
        public let turns: Int

        public var description: String {
            turns == 0
                ? "ManualScheduler: work is still waiting for a turn"
                : "ManualScheduler: work was still waiting after \(turns) turns (does a handler reschedule itself?)"
        }
    }

    /// Creates a scheduler owned by the calling thread.
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``CoalescingScheduler/label``); by default the creation site.
    ///   - commonModes: The modes that `.common` stands for (`.default` is always one).
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public init(
        label: String? = nil, commonModes: Set<RunLoop.Mode> = [.default], file: StaticString = #fileID,
        line: UInt = #line
    ) {
        self.commonModes = commonModes.union([.default])
        super.init(label: DiagnosticLabel(label, file: file, line: line), turnThread: .creatorForMain)
    }

    package override func now() -> UInt64 {
        clock.withLock { $0 }
    }

    /// Moves forward the clock that diagnostics read for this scheduler's turns and deliveries — how long a
    /// turn or a delivery outside a turn took (the slow-turn and slow-updater reports, and their once-a-second
    /// limits), how long a turn has been asked for (the overdue turn that `debugDescription` names) — which
    /// otherwise stands still: a test says what an updater took instead of sleeping, and a loaded machine never
    /// makes a report of its own. Like swift-clocks' `TestClock.advance(by:)`.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let scheduler = ManualScheduler()
    /// let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    /// context.onUpdate { _ in scheduler.advanceClock(by: 0.040) }   // this updater "takes" 40 ms
    /// context.setNeedsUpdate()
    /// scheduler.turn()   // reported: UpdateDiagnostics.Report.Kind.slowTurn, naming the context
    /// ```
    ///
    /// Any thread.
    /// - Parameters:
    ///   - seconds: How far, in seconds: finite and not negative (anything else is reported as misuse, and
    ///     the clock does not move).
    ///   - file: The caller's file (`#fileID`), named by the report of a bad value.
    ///   - line: The caller's line.
    public func advanceClock(by seconds: TimeInterval, file: StaticString = #fileID, line: UInt = #line) {
        guard seconds.isFinite, seconds >= 0 else {
            return Misuse.recoverable(
                "ManualScheduler.advanceClock(by:) needs a finite duration, not negative (got \(seconds))",
                label: label, file: file, line: line)
        }
        let nanoseconds = UInt64(min(seconds, 1e10) * 1e9)  // (300 years at most: the clock never wraps)
        clock.withLock { $0 &+= nanoseconds }
    }

    /// The mode of the turn under way, or `nil` outside ``turn(mode:file:line:)`` ("no running loop").
    public override var currentMode: RunLoop.Mode? { isCurrent ? mode : nil }

    public override func isCommon(_ mode: RunLoop.Mode) -> Bool { commonModes.contains(mode) || mode == .common }

    /// Runs one turn in `mode`: every context with pending work delivers what that mode admits.
    ///
    /// Work scheduled during the turn (by handlers) waits for the next one. A turn called inside another (a
    /// handler's modal wait) serves only what was listed since the outer turn began: what the outer turn has
    /// not reached yet waits for it, as on the main run loop.
    /// - Returns: How many listings the turn served: each context listed for it, including one whose work
    ///   was delivered before the turn (by `updateIfNeeded()`, `update()` or a scope's flush) and so delivers
    ///   nothing now, and twice one that the main thread and another thread both listed in one cycle (it delivers
    ///   once); 0 when nothing was listed. ``isIdle`` says whether a turn would deliver anything.
    /// - Parameters:
    ///   - mode: The mode of the turn.
    ///   - file: The caller's file (`#fileID`): a turn off the scheduler's thread stops the program, in
    ///     every build, with a message naming this line.
    ///   - line: The caller's line.
    @discardableResult
    public func turn(mode: RunLoop.Mode = .default, file: StaticString = #fileID, line: UInt = #line) -> Int {
        if !isCurrent {
            Misuse.unrecoverable(
                "ManualScheduler.turn(mode:) must be called on the thread that created the scheduler "
                    + "(\(label)); create the scheduler on the thread that turns it (in Swift Testing, mark the "
                    + "test @MainActor when its contexts update views)", file: file, line: line)
        }
        let outer = self.mode
        self.mode = mode
        defer { self.mode = outer }
        return runTurn(mode: mode, isCommonMode: isCommon(mode))
    }

    /// Whether nothing requested waits for a turn: no turn has been asked for and no work is parked for a mode
    /// that no turn has admitted yet — or what is listed has already been delivered, however it was delivered
    /// (`updateViewIfNeeded()`, `update()` or an animating scope's flush before the turn), so that the next turn
    /// would deliver nothing (an update a suspended context holds waits for its `resume()`, not for a turn).
    /// Inside a turn, what that turn has not reached yet counts as waiting. Read it on the scheduler's thread.
    public var isIdle: Bool {
        if !hasRequestedTurn && !hasPendingWork { return true }
        return isCurrent && !waitingClients().contains { $0.client.hasWorkForTurn }
    }

    /// Throws ``NotIdle`` unless ``isIdle``: call it at the end of a test, on the scheduler's thread. It passes
    /// once everything requested has been delivered, at a turn or at once.
    public func expectIdle() throws {
        if !isIdle { throw NotIdle(turns: 0) }
    }

    /// Turns in `mode` until no work that `mode` admits is left: no turn is asked for, and nothing parked
    /// waits for a mode that `mode` admits. At most `maxTurns` turns (below 1: reported as misuse, and 1).
    /// Called inside a turn (a modal wait in an updater), it leaves what that turn has not reached to it.
    ///
    /// Work parked for a mode that `mode` does not admit stays parked (it does not ask for turns); turn
    /// in its mode to deliver it. This is the liveness rule of every scheduler (see
    /// ``CoalescingScheduler/hasWork(admittedBy:)``): when it returns, a run loop in `mode` could sleep.
    /// - Returns: The number of turns taken (0 when there was nothing to do).
    /// - Throws: ``NotIdle`` when work was still asking for a turn after `maxTurns` turns (a handler that
    ///   reschedules itself every turn): a hang turned into a failure.
    @discardableResult
    public func runUntilIdle(
        mode: RunLoop.Mode = .default, maxTurns: Int = 1_000, file: StaticString = #fileID, line: UInt = #line
    ) throws -> Int {
        var maxTurns = maxTurns
        if maxTurns <= 0 {
            Misuse.recoverable(
                "ManualScheduler.runUntilIdle(maxTurns:) needs maxTurns > 0 (got \(maxTurns)); it takes 1",
                label: label, file: file, line: line)
            maxTurns = 1
        }
        var turns = 0
        while hasWork(admittedBy: mode) {
            guard turns < maxTurns else { throw NotIdle(turns: turns) }
            turn(mode: mode, file: file, line: line)
            turns += 1
        }
        return turns
    }
}
