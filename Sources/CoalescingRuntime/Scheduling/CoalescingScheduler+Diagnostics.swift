import CCoalescingSupport
import Foundation

// What a scheduler tells diagnostics: when it last turned, whether a turn is overdue, and who waits on it.
extension CoalescingScheduler: CustomDebugStringConvertible {
    /// A turn that calls clients began (scheduler's thread). Returns what ``noteTurnEnded(_:)`` needs: the
    /// clock's reading, and the state of a turn already under way on this thread (a nested run loop).
    @inline(__always)
    final func noteTurn() -> TurnTiming {
        let began = now()
        let outer = TurnTiming(began: began, outer: stamp.pointee)
        stamp.pointee.stamp = began
        stamp.pointee.valid = true
        stamp.pointee.inTurn = true
        stamp.pointee.othersRan = false
        stamp.pointee.untimedDeliveries = 0
        stamp.pointee.firstSubject = nil
        if stamp.pointee.timedTurns > 0 { stamp.pointee.timedTurns -= 1 }
        cvu_word_store_relaxed(turnWord + Word.lastTurn, began)
        cvu_word_store_relaxed(turnWord + Word.turns, cvu_word_load_relaxed(turnWord + Word.turns) &+ 1)
        return outer
    }

    /// The turn that ``noteTurn()`` began has ended: what runs next is not timed from it; a slow turn names
    /// its one delivery's context, or has the next turns time each delivery (see ``TurnStamp``).
    @inline(__always)
    final func noteTurnEnded(_ timing: TurnTiming) {
        let elapsed = now() &- timing.began
        let single = stamp.pointee.untimedDeliveries == 1 && !stamp.pointee.othersRan
        let subject = stamp.pointee.firstSubject.map { Unmanaged<AnyObject>.fromOpaque($0).takeRetainedValue() }
        // Back to the outer turn's state (a nested loop's turn inside one of its deliveries), or to none.
        let timedTurns = stamp.pointee.timedTurns
        stamp.pointee = timing.outer
        stamp.pointee.timedTurns = timedTurns
        stamp.pointee.valid = false
        if elapsed > UpdateDiagnostics.frameNanoseconds {
            if single, let subject = subject as? SlowTurnSubject, subject.reportSlowTurn(nanoseconds: elapsed) {
                return
            }
            stamp.pointee.timedTurns = Self.timedTurnsAfterASlowOne
        }
    }

    /// How many turns time each delivery after a turn slower than a frame.
    static let timedTurnsAfterASlowOne: UInt32 = 120

    /// Whether a turn has been asked for and has not begun for more than a second (any thread): measured from
    /// when the waiting batch asked, or from the last turn if one began since.
    package final var isTurnOverdue: Bool {
        guard hasRequestedTurn else { return false }
        let since = max(cvu_word_load_relaxed(turnWord + Word.asked), cvu_word_load_relaxed(turnWord + Word.lastTurn))
        return now() &- since > 1_000_000_000
    }

    /// What to do when this scheduler does not turn.
    package var stallAdvice: String {
        if self is ManualScheduler {
            return "A manual scheduler turns only when its test calls turn() or runUntilIdle()."
        }
        if isMainThreadScheduler && !(self is DispatchMainScheduler) {
            return "Is the main thread blocked, or running no run loop (an async main, Swift Testing on "
                + "Linux, dispatchMain())? Use the .dispatchMain scheduler there."
        }
        return "Is its thread blocked, or not running its run loop?"
    }

    /// The clients waiting for a turn, with the modes of those parked for other modes (`nil`: the next
    /// turn). The scheduler's own-thread list is read only on its thread. Labels are made outside the lock.
    final func waitingClients() -> [(label: String, modes: [RunLoop.Mode]?)] {
        var waiting = queue.withLock { queue -> [(DiagnosticLabel?, [RunLoop.Mode]?)] in
            queue.waiting.map { ($0.diagnosticLabel, nil) } + queue.parked.map { ($0.client.diagnosticLabel, $0.modes) }
        }
        if isCurrent { waiting += ownerWaiting.map { ($0.diagnosticLabel, nil) } }
        return waiting.map { ($0.0?.string ?? "(unlabelled)", $0.1) }
    }

    /// How many turns that called clients have run (the serial a client's last turn is compared with).
    package final var turnCount: UInt64 { cvu_word_load_relaxed(turnWord + Word.turns) }

    /// Seconds since the last turn that called clients began, or `nil` if none has.
    package final var secondsSinceLastTurn: Double? {
        let last = cvu_word_load_relaxed(turnWord + Word.lastTurn)
        guard last != 0 else { return nil }
        return Double(now() &- last) / 1e9
    }

    /// The scheduler as a person chasing a missing update wants it: its label and type, whether a turn is
    /// asked for, how many turns have run and when the last began, and the contexts waiting on it with the
    /// modes they wait for. Any thread (contexts listed on the scheduler's own thread show only there).
    public var debugDescription: String {
        let turns = cvu_word_load_relaxed(turnWord + Word.turns)
        var text = "\(type(of: self)) \"\(label)\": "
        text += hasRequestedTurn ? "a turn is asked for" : "no turn asked for"
        if let seconds = secondsSinceLastTurn {
            text += String(format: "; %llu turns, the last %.3f s ago", turns, seconds)
        } else {
            text += "; it has not turned yet"
        }
        if isTurnOverdue { text += "; a turn asked for more than a second ago has not begun. " + stallAdvice }
        let lines = waitingClients().map { label, modes in
            guard let modes else { return "waiting: \(label)" }
            return "parked until a turn in \(modes.map(\.rawValue).joined(separator: " or ")): \(label)"
        }
        if !lines.isEmpty { text += "\n  " + lines.joined(separator: "\n  ") }
        return text
    }
}

/// What ``CoalescingScheduler/noteTurn()`` hands to ``CoalescingScheduler/noteTurnEnded(_:)``.
struct TurnTiming {
    let began: UInt64
    /// The scheduler's timing state before the turn (a turn under way, when this one is nested).
    let outer: TurnStamp
}

/// How a scheduler times its deliveries for the slow-updater report. A turn is timed as a whole (two clock
/// reads). A slow turn that made one untimed delivery and ran nothing else names that delivery's context
/// (`firstSubject`, retained by the first untimed delivery of the turn: one retain per turn, not per
/// delivery); any other slow turn makes the next `timedTurns` turns time each delivery and updater, so that a
/// slow updater is named when it is slow again — without a clock read per delivery otherwise. `stamp` is the
/// last reading a timed delivery may start from, `valid` until other code may have run (a notification's
/// observers, a transaction's completions, a report's handler, the turn's end). Confined to the scheduler's
/// thread.
package struct TurnStamp {
    package var stamp: UInt64 = 0
    /// Retained; taken by the turn's end.
    package var firstSubject: UnsafeMutableRawPointer?
    package var timedTurns: UInt32 = 0
    package var untimedDeliveries: UInt32 = 0
    package var valid = false
    /// A turn of this scheduler is under way.
    package var inTurn = false
    /// Code other than deliveries ran in this turn (a notification's observers).
    package var othersRan = false
}

/// A client that a slow turn can name: the one delivery of a turn slower than a frame.
package protocol SlowTurnSubject: AnyObject {
    /// The turn that made this client's only delivery took `nanoseconds`, longer than a frame. Returns
    /// whether that names the culprit (one updater); `false` has the next turns time each updater.
    func reportSlowTurn(nanoseconds: UInt64) -> Bool
}
