import CCoalescingSupport
import CoalescingRuntime
import Foundation

/// The main-thread half of ``UpdateStorage`` that turns and deliveries take: the scheduler's turn, and
/// the call of each updater, claimed under the lock so that a removal from another thread is exact.
extension UpdateStorage {
    /// Calls every updater registered when the delivery began, in order, each with the same flag.
    ///
    /// Each entry is taken under the lock and called outside it, so an updater removed meanwhile (by
    /// an earlier updater, from another thread, or with the context) is never called. `isScopeFlush`: the
    /// delivery a scope's entry makes of what was pending (recording names it so).
    ///
    /// `note`: the request that made this delivery the rules' early flush, which the next delivery absorbs —
    /// counted once this one has taken what it absorbed.
    func deliver(_ delivery: Delivery, thenNote note: RequestNote? = nil) {
        if isCancelled {
            machinePointer.pointee.cancel()
            return
        }
        machinePointer.pointee.deliveryBegan(delivery)
        let transaction = beginTransaction(of: delivery)
        var probe = DeliveryProbe(self)  // what diagnostics watch of it
        if let note { noteApplied(note) }
        // Each updater is taken under the lock: that is where its call begins. A removal from another thread
        // takes the lock too, so it either comes first (the updater is not called) or after (the call taken is
        // under way, and finishes). Each is released as its call returns, before any other code runs (the
        // probe's report is the user's handler): an updater that removed itself lets go of what it captured (a
        // tracked one, its tracking) at once, as removal promises.
        // The first is taken with the newest one this delivery calls (the limit).
        var id: UInt64 = 0
        var limit: UInt64 = 1
        while id < limit,
            let next = withShared({ shared -> UpdaterEntry? in
                if id == 0 { limit = shared.updaters.newestID }
                return shared.updaters.next(after: id, upTo: limit)
            })
        {
            id = next.id
            next.call(delivery.animated)
            _ = consume next
            probe.updaterReturned(self)
        }
        probe.end(self, delivery, transaction: transaction)
        // The completions run after the updaters (inside the delivery: what they request waits for a later
        // cycle), or once the animations the updaters started end.
        if let transaction { endTransaction(transaction, hadUpdaters: id != 0) }
        // What updaters asked for waits in the inbox for a later cycle. A nested run loop inside an updater
        // may have run a turn that passed this storage by: register again, or what is pending would wait for
        // an unrelated turn. Not when the context went inside an updater: the scheduler may have gone with it.
        noteDeliveryEnded()
        if machinePointer.pointee.deliveryEnded() && !isCancelled {
            withScheduler { $0.scheduleOnOwnerThread(self) }
        }
    }

    /// Whether a turn would still find something to deliver (``ManualScheduler/isIdle``): an update pending
    /// and not suspended (a suspended one waits for `resume()`, not a turn), or requests in the inbox. Main
    /// thread.
    package var hasWorkForTurn: Bool {
        let machine = machinePointer.pointee
        return !isCancelled && (machine.pending.isScheduled && !machine.isSuspended || inboxHasRequests)
    }

    /// View updates wait for a pass in a common mode, as Core Animation's commit does.
    private static let updateModes: [RunLoop.Mode] = [.common]

    package func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]? {
        if isCancelled {
            machinePointer.pointee.cancel()
            return nil
        }
        // A pass in a private mode (code waiting synchronously in a mode of its own): nothing is applied or
        // delivered; the storage stays registered, parked until a common pass. Listed twice in this turn
        // (both of its lists), it parks once.
        // (`isCommonMode` is exactly what `admits([.common])` asks, without comparing mode names per context.)
        if !turn.isCommonMode {
            return machinePointer.pointee.park(serial: turn.serial) ? Self.updateModes : nil
        }
        switch machinePointer.pointee.turnBegan(serial: turn.serial) {
        case .skip:
            return nil
        case .missed:
            // Registered nowhere now (the machine forgot its own-thread registration): let the next request
            // from another thread register again; the end of the delivery registers for what is pending.
            withShared { $0.inboxIsQueued = false }
            return nil
        case .run:
            break
        }
        drainInboxIfNeeded()
        let delivery = machinePointer.pointee.turnEnded(defaultAnimated: animated)
        // Published after the updaters ran: other threads read the update as pending until it is delivered.
        if let delivery { deliver(delivery) }
        publishScheduled()
        return nil
    }
}
