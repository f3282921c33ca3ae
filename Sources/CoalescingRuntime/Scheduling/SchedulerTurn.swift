import Foundation

/// One turn of a scheduler, as its clients see it.
@usableFromInline
package struct SchedulerTurn {
    /// The run-loop mode of the turn; `nil` for a scheduler without modes (every mode matches).
    package let mode: RunLoop.Mode?
    /// Whether `mode` is one of the run loop's common modes.
    package let isCommonMode: Bool
    /// Different for every turn of one scheduler (a client listed twice in one turn sees the same serial).
    package let serial: UInt64

    package init(mode: RunLoop.Mode?, isCommonMode: Bool, serial: UInt64) {
        (self.mode, self.isCommonMode, self.serial) = (mode, isCommonMode, serial)
    }

    /// Whether work registered for `modes` may run in this turn.
    package func admits(_ modes: [RunLoop.Mode]) -> Bool {
        guard let mode else { return true }
        return modes.contains(mode) || (isCommonMode && modes.contains(.common))
    }
}

/// Something that has work waiting for a scheduler's turn.
///
/// Clients are handed between threads (scheduled from any thread, called on the scheduler's): each must
/// synchronise its own state. Not `Sendable` by requirement, so that a `ManagedBuffer` subclass (which no
/// `Sendable` type may be) can be one.
@usableFromInline
package protocol TurnClient: AnyObject {
    /// Does the work the turn admits, on the scheduler's thread.
    ///
    /// - Returns: `nil` when nothing remains; otherwise the modes the remaining work waits for (work this
    ///   turn did not admit). The scheduler then keeps the client for later turns, calling it at each, and
    ///   the client counts as scheduled.
    func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]?

    /// What diagnostics call the client (a scheduler's `debugDescription` lists who waits). Any thread.
    var diagnosticLabel: DiagnosticLabel? { get }

    /// Whether the client still has work for a turn: `false` once what it listed itself for was done before
    /// the turn (an update delivered at once). On the scheduler's thread; `true` unless the client knows.
    var hasWorkForTurn: Bool { get }
}

extension TurnClient {
    package var diagnosticLabel: DiagnosticLabel? { nil }
    package var hasWorkForTurn: Bool { true }
}
