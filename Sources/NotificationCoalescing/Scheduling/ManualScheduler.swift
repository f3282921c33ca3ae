import Foundation

/// A scheduler you turn by hand, for tests: nothing is delivered until you call ``turn(mode:)``.
///
/// ```swift
/// let scheduler = ManualScheduler()
/// let context = NotificationCoalescingContext(scheduler: scheduler)
/// context.enqueue(Notification(name: .init("a")))
/// context.enqueue(Notification(name: .init("a")))
/// scheduler.turn()   // "a" is posted once, here, on this thread
/// ```
///
/// > Important: A manual scheduler belongs to the thread that creates it: turn it, and call
/// > synchronous APIs such as `.now` posts or `update()`, on that thread. Other threads may schedule
/// > work at any time; it waits for the next ``turn(mode:)``.
public final class ManualScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `owner` and `commonModes` are immutable; `mode` is written and read only on
    // the owner thread (turns and `currentMode` assert it).
    private let owner = ThreadIdentity.current
    private let commonModes: Set<RunLoop.Mode>
    private nonisolated(unsafe) var mode: RunLoop.Mode?

    /// Creates a scheduler owned by the calling thread.
    ///
    /// - Parameter commonModes: The modes that `.common` stands for (`.default` is always one).
    public init(commonModes: Set<RunLoop.Mode> = [.default]) {
        self.commonModes = commonModes.union([.default])
        super.init()
    }

    public override var isCurrent: Bool { owner.isCurrent }

    /// The mode of the turn under way, or `nil` outside ``turn(mode:)`` ("no running loop").
    public override var currentMode: RunLoop.Mode? { isCurrent ? mode : nil }

    override func isCommon(_ mode: RunLoop.Mode) -> Bool { commonModes.contains(mode) || mode == .common }

    /// Runs one turn in `mode`: every context with pending work delivers what that mode admits.
    ///
    /// Work scheduled during the turn (by handlers) waits for the next one.
    /// - Returns: How many clients had work waiting (0 when the turn found nothing to do).
    @discardableResult
    public func turn(mode: RunLoop.Mode = .default) -> Int {
        precondition(
            owner.isCurrent, "ManualScheduler.turn(mode:) must be called on the thread that created the scheduler")
        let outer = self.mode
        self.mode = mode
        defer { self.mode = outer }
        return runTurn(mode: mode, isCommonMode: isCommon(mode))
    }

    /// Turns until no work is waiting, at most `maxTurns` times.
    ///
    /// - Returns: The number of turns taken. It equals `maxTurns` only when work kept coming back
    ///
    ///   (a handler re-enqueueing itself every turn), which this bound turns from a hang into a result.
    @discardableResult
    public func runUntilIdle(mode: RunLoop.Mode = .default, maxTurns: Int = 1_000) -> Int {
        precondition(maxTurns > 0, "ManualScheduler.runUntilIdle(maxTurns:) needs maxTurns > 0")
        var turns = 0
        guard hasPendingWork else { return 0 }
        repeat {
            turn(mode: mode)
            turns += 1
        } while turns < maxTurns && hasWaitingWork
        return turns
    }
}
