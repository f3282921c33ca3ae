import CCoalescingSupport
import Foundation

// What a scheduler says about the work waiting for it: the liveness questions, any thread.
extension CoalescingScheduler {
    /// Whether work is waiting for a turn (including work parked until one of its modes turns).
    ///
    /// Read it on the scheduler's thread for an exact answer (work scheduled there is not locked).
    public final var hasPendingWork: Bool {
        queue.withLock { !$0.waiting.isEmpty || !$0.parked.isEmpty } || (isCurrent && !ownerWaiting.isEmpty)
    }

    /// Whether a turn in `mode` would find work to do: a turn has been asked for, or work parked for
    /// another mode is admitted by `mode` (`nil` admits every mode).
    ///
    /// The liveness rule of every scheduler: the scheduler's thread must not go to sleep while this is
    /// true for the mode it runs in. A ``RunLoopScheduler`` checks it after the last observer of each
    /// pass; a ``ManualScheduler``'s ``ManualScheduler/runUntilIdle(mode:maxTurns:file:line:)`` turns until it is
    /// false. Any thread; exact on the scheduler's thread.
    public final func hasWork(admittedBy mode: RunLoop.Mode?) -> Bool {
        hasRequestedTurn || hasParkedWork(admittedBy: mode)
    }

    /// Whether work parked for other modes is admitted by `mode`.
    package final func hasParkedWork(admittedBy mode: RunLoop.Mode?) -> Bool {
        let turn = SchedulerTurn(mode: mode, isCommonMode: mode.map(isCommon) ?? true, serial: 0)
        return queue.withLock { queue in queue.parked.contains { turn.admits($0.modes) } }
    }

    /// Whether a turn has been asked for and not yet begun: work that the next turn will do.
    package final var hasRequestedTurn: Bool {
        cvu_word_load_acquire(turnWord) & 1 != 0
    }

    /// The number of the newest batch: the one a turn has been asked for, while ``hasRequestedTurn``.
    /// Read it in ``requestTurn(insideTurn:)`` to learn the number of the batch that asks (a later one,
    /// if a turn and another batch came meanwhile: that turn served the asking batch). Any thread.
    package final var newestBatch: UInt64 {
        cvu_word_load_acquire(turnWord) >> 1
    }

    /// Whether a turn has begun to serve batch `batch` (one numbered by ``newestBatch``). Read it on the
    /// scheduler's thread.
    package final func hasServed(batch: UInt64) -> Bool {
        servedBatch >= batch
    }

    /// Whether a turn is under way on the scheduler's thread (read it there).
    package final var isInsideTurn: Bool {
        isCurrent && turnDepth > 0
    }
}
