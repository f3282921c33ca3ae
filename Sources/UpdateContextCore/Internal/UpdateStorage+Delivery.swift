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
    func deliver(_ delivery: Delivery, isScopeFlush: Bool = false) {
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
        // The newest updater this delivery calls, the inbox's count of posts, and whether recording noted a
        // first request (this delivery takes it).
        let (limit, posted, hasRecordedSite) = withShared { shared in
            defer { shared.hasRecordedSite = false }
            return (shared.updaters.newestID, shared.posted, shared.hasRecordedSite)
        }
        let absorbed = takeAbsorbed(posted: posted)
        // The first request this delivery absorbed is claimed with its count, before any updater can request
        // again (for the next delivery) or recording can change; a delivery made while not recording just
        // forgets it (no stale site for a later one).
        let recordedSite = hasRecordedSite ? withShared({ $0.link })?.takeRecordedSite() : nil
        // The completions run after the updaters (inside the delivery: what they request waits for a
        // later cycle), or once the animations the updaters started end.
        var hadUpdaters = false
        defer { if let transaction { endTransaction(transaction, hadUpdaters: hadUpdaters) } }
        // The slow-updater report times each updater (a monotonic clock, ~30 ns a read) in deliveries outside a
        // turn, while recording, and for a while after a turn slower than a frame; other turns are timed
        // whole by the scheduler (see `TurnStamp`). A timed delivery in a turn starts from the
        // turn's reading or the previous timed delivery's last one (no user code ran since); a nested one
        // (an updater's `update()` of another context) reads the clock.
        let stamp = withScheduler { $0.stamp }
        let inTurn = stamp.pointee.inTurn
        let recording = cvu_diagnostics_is_recording()
        let timed = !inTurn || stamp.pointee.timedTurns > 0 || recording
        let began = !timed ? 0 : stamp.pointee.valid ? stamp.pointee.stamp : withScheduler { $0.now() }
        stamp.pointee.valid = false
        if !timed {
            // The turn is timed whole; its first untimed delivery is kept (one retain per turn), so that a slow
            // turn with this one delivery names it.
            if stamp.pointee.untimedDeliveries == 0 {
                stamp.pointee.firstSubject = Unmanaged<AnyObject>.passRetained(self).toOpaque()
            }
            stamp.pointee.untimedDeliveries &+= 1
        }
        var clock = UpdaterClock(isTimed: timed, time: began)
        let interval = Signposts.begin(.delivery, label: label.string, count: Int(absorbed))
        // Each updater is taken under the lock: that is where its call begins. A removal from another thread
        // takes the lock too, so it either comes first (the updater is not called) or after (the call taken is
        // under way, and finishes). Each is released before the next is taken: an updater that removed itself
        // lets go of what it captured (a tracked one, its tracking) at once, as removal promises.
        var id: UInt64 = 0
        while let next = withShared({ $0.updaters.next(after: id, upTo: limit) }) {
            hadUpdaters = true
            id = next.id
            next.call(delivery.animated)
            if clock.isTimed { clock.lap(self) }
        }
        Signposts.end(interval)
        // The next delivery of this turn starts from here — unless completions (user code) run after this.
        if timed {
            stamp.pointee.stamp = clock.time
            stamp.pointee.valid = inTurn && transaction == nil && !recording
        }
        // Completions run after the updaters, inside the turn: a slow turn is then not this updater's alone
        // (the next slow turns time each updater apart from what runs around it).
        if inTurn && transaction != nil { stamp.pointee.othersRan = true }
        if recording {
            reportDelivery(
                delivery, absorbed: absorbed, site: recordedSite, transaction: transaction,
                nanoseconds: clock.time &- began, isScopeFlush: isScopeFlush)
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

/// A timed delivery's clock: when the last updater returned, and how many have been timed.
struct UpdaterClock {
    let isTimed: Bool
    var time: UInt64
    var index = 0

    init(isTimed: Bool, time: UInt64) {
        self.isTimed = isTimed
        self.time = time
    }

    /// An updater of `storage` returned: reports it if it took longer than a frame.
    mutating func lap(_ storage: UpdateStorage) {
        let now = storage.withScheduler { $0.now() }
        if now &- time > UpdateDiagnostics.frameNanoseconds {
            storage.noteSlowUpdater(index: index, nanoseconds: now &- time)
            time = storage.withScheduler { $0.now() }  // the report's handler is not the next updater's time
        } else {
            time = now
        }
        index += 1
    }
}
