import CCoalescingSupport
import Foundation
import NotificationCoalescing

/// The main-thread half of ``UpdateStorage`` that turns and deliveries take: the scheduler's turn, and
/// the call of each updater, claimed under the lock so that a removal from another thread is exact.
extension UpdateStorage {
    /// Calls every updater registered when the delivery began, in order, each with the same flag.
    ///
    /// Each entry is taken under the lock and called outside it, so an updater removed meanwhile (by
    /// an earlier updater, from another thread, or with the context) is never called.
    func deliver(_ delivery: Delivery) {
        if isCancelled {
            machinePointer.pointee.cancel()
            return
        }
        machinePointer.pointee.deliveryBegan(delivery)
        let transaction = beginTransaction(of: delivery)
        defer {
            // What updaters asked for waits in the inbox for a later cycle. A nested run loop inside an
            // updater may have run a turn that passed this storage by: register again, or what is pending
            // would wait for an unrelated turn. Not when the context went inside an updater: the scheduler
            // may have gone with it.
            noteDeliveryEnded()
            if machinePointer.pointee.deliveryEnded() && !isCancelled {
                withScheduler { $0.scheduleOnOwnerThread(self) }
            }
        }
        // Each entry is claimed under the lock (`claimedUpdater`): that is where its call begins. A removal
        // from another thread takes the lock too, so it either comes first (the entry is gone) or sees the
        // claim (the call is under way, and finishes).
        let claimed = claimedUpdaterPointer
        let shared = sharedPointer
        let stripe = StripedLocks.stripe(for: self)
        cvu_stripe_lock(stripe)
        var entry = shared.pointee.updaters.firstEntry
        if let entry { cvu_u32_store_release(claimed, UInt32(truncatingIfNeeded: entry.id)) }
        let limit = shared.pointee.updaters.newestID
        let posted = shared.pointee.posted
        cvu_stripe_unlock(stripe)
        let absorbed = takeAbsorbed(posted: posted)
        // The completions run after the updaters (inside the delivery: what they request waits for a
        // later cycle), or once the animations the updaters started end.
        let hadUpdaters = entry != nil
        defer { if let transaction { endTransaction(transaction, hadUpdaters: hadUpdaters) } }
        // The slow-updater report times each updater (a monotonic clock, ~30 ns a read) in deliveries outside a
        // turn, while recording, and for a while after a turn slower than a frame; other turns are timed
        // whole by the scheduler (see `cvu_diagnostics_stamp_t`). A timed delivery in a turn starts from the
        // turn's reading or the previous timed delivery's last one (no user code ran since); a nested one
        // (an updater's `update()` of another context) reads the clock.
        let stamp = cvu_diagnostics_stamp_get()!
        let inTurn = stamp.pointee.inTurn
        let recording = cvu_diagnostics_is_recording()
        let timed = !inTurn || stamp.pointee.timedTurns > 0 || recording
        let began = !timed ? 0 : stamp.pointee.valid ? stamp.pointee.stamp : cvu_monotonic_now_ns()
        stamp.pointee.valid = false
        if !timed {
            // The turn is timed whole; its first untimed delivery is kept (one retain per turn), so that a slow
            // turn with this one delivery names it.
            if stamp.pointee.untimedDeliveries == 0 {
                stamp.pointee.firstSubject = Unmanaged<AnyObject>.passRetained(self).toOpaque()
            }
            stamp.pointee.untimedDeliveries &+= 1
        }
        var time = began
        var index = 0
        let interval = Signposts.begin(.delivery, label: label.string, count: Int(absorbed))
        while let current = entry {
            current.call(delivery.animated)
            cvu_u32_store_release(claimed, 0)
            if timed {
                let now = cvu_monotonic_now_ns()
                if now &- time > UpdateDiagnostics.frameNanoseconds {
                    noteSlowUpdater(index: index, nanoseconds: now &- time)
                    time = cvu_monotonic_now_ns()  // the report's handler is not the next updater's time
                } else {
                    time = now
                }
                index += 1
            }
            if current.id >= limit { break }
            cvu_stripe_lock(stripe)
            entry = shared.pointee.updaters.next(after: current.id, upTo: limit)
            if let entry { cvu_u32_store_release(claimed, UInt32(truncatingIfNeeded: entry.id)) }
            cvu_stripe_unlock(stripe)
        }
        Signposts.end(interval)
        // The next delivery of this turn starts from here — unless completions (user code) run after this.
        if timed {
            stamp.pointee.stamp = time
            stamp.pointee.valid = inTurn && transaction == nil && !recording
        }
        if recording {
            reportDelivery(delivery, absorbed: absorbed, transaction: transaction, nanoseconds: time &- began)
        }
    }

    /// The updater a delivery has claimed and not finished calling (low 32 bits of its id; 0: none). Any
    /// thread: read it after taking the lock.
    var claimedUpdaterID: UInt32 {
        cvu_u32_load_acquire(claimedUpdaterPointer)
    }

    /// View updates wait for a pass in a common mode, as Core Animation's commit does.
    private static let updateModes: [RunLoop.Mode] = [.common]

    func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]? {
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
