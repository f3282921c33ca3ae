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

    /// ``performTurn(_:)`` of the client at `object`, which the caller keeps alive. Implemented once, in
    /// the extension below; a requirement so that each client's witness calls its own `performTurn`
    /// directly (as an extension method it was a generic call through the witness table).
    static func performTurn(unretained object: UnsafeMutableRawPointer, _ turn: SchedulerTurn) -> [RunLoop.Mode]?

    /// Releases the client at `object` (retained by ``PendingClient``). Implemented once, below.
    static func release(_ object: UnsafeMutableRawPointer)
}

extension TurnClient {
    package var diagnosticLabel: DiagnosticLabel? { nil }
    package var hasWorkForTurn: Bool { true }
}

/// A client in the scheduler's own-thread list: retained by hand (one retain when listed, one release
/// after its turn), and called through its type, unretained, for the turn. Calling a protocol existential
/// copied it — a retain and a release per client per turn, 6% of a large fan-out.
@usableFromInline
struct PendingClient {
    @usableFromInline let object: UnsafeMutableRawPointer
    @usableFromInline let type: any TurnClient.Type

    /// Lists `client`: retains it until ``release()``.
    @inlinable
    init(_ client: some TurnClient) {
        object = Unmanaged.passRetained(client).toOpaque()
        type = Swift.type(of: client)
    }

    /// The client, retained (for lists that hold clients as values).
    var client: any TurnClient {
        type.takeClient(object)
    }

    /// Calls the client's turn (it stays retained: call ``release()`` after).
    func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]? {
        type.performTurn(unretained: object, turn)
    }

    func release() {
        type.release(object)
    }
}

extension TurnClient {
    @inlinable
    package static func performTurn(unretained object: UnsafeMutableRawPointer, _ turn: SchedulerTurn)
        -> [RunLoop.Mode]?
    {
        Unmanaged<Self>.fromOpaque(object)._withUnsafeGuaranteedRef { $0.performTurn(turn) }
    }

    @inlinable
    package static func release(_ object: UnsafeMutableRawPointer) {
        Unmanaged<Self>.fromOpaque(object).release()
    }

    fileprivate static func takeClient(_ object: UnsafeMutableRawPointer) -> any TurnClient {
        Unmanaged<Self>.fromOpaque(object).takeUnretainedValue()
    }
}
