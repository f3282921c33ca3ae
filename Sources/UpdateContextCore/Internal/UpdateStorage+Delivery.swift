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
        // Each entry is claimed under the lock (`claimedUpdater`): that is where its call begins. A removal
        // from another thread takes the lock too, so it either comes first (the entry is gone) or sees the
        // claim (the call is under way, and finishes).
        let stripe = StripedLocks.stripe(for: self)
        let (entry, limit, posted, hasRecordedSite) = claimFirstUpdater(stripe: stripe)
        let absorbed = takeAbsorbed(posted: posted)
        // The first request this delivery absorbed is claimed with its count, before any updater can request
        // again (for the next delivery) or recording can change; a delivery made while not recording just
        // forgets it (no stale site for a later one).
        let recordedSite = hasRecordedSite ? withShared({ $0.link })?.takeRecordedSite() : nil
        // The completions run after the updaters (inside the delivery: what they request waits for a
        // later cycle), or once the animations the updaters started end.
        let hadUpdaters = entry != nil
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
        callUpdaters(from: consume entry, upTo: limit, stripe: stripe, animated: delivery.animated, clock: &clock)
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

    /// Under the lock: the first updater, claimed (see `claimedUpdater`), the newest id a delivery
    /// beginning now calls, the inbox's count of posts, and whether recording noted a first request
    /// (cleared: this delivery takes it).
    @inline(never)
    private func claimFirstUpdater(
        stripe: CUnsignedInt
    ) -> (UpdaterEntry?, limit: UInt64, posted: UInt32, hasRecordedSite: Bool) {
        let shared = sharedPointer
        cvu_stripe_lock(stripe)
        defer { cvu_stripe_unlock(stripe) }
        let entry = shared.pointee.updaters.firstEntry
        if let entry { cvu_u32_store_release(claimedUpdaterPointer, UInt32(truncatingIfNeeded: entry.id)) }
        let hasRecordedSite = shared.pointee.hasRecordedSite
        if hasRecordedSite { shared.pointee.hasRecordedSite = false }
        return (entry, shared.pointee.updaters.newestID, shared.pointee.posted, hasRecordedSite)
    }

    /// Calls `first` (claimed by ``claimFirstUpdater(stripe:)``) and then each later updater up to `limit`,
    /// each claimed under the lock and called outside it.
    ///
    /// An outlined function that owns the entry it is given: called where the delivery held its copy, an
    /// updater was copied twice more around the call (two more retain/release pairs per delivery). The
    /// first call is written apart from the loop's for the same reason: one `var current` for both made
    /// the optimiser copy the entry again around each call.
    @inline(never)
    private func callUpdaters(
        from first: consuming UpdaterEntry?, upTo limit: UInt64, stripe: CUnsignedInt, animated: Bool,
        clock: inout UpdaterClock
    ) {
        guard let entry = consume first else { return }
        let claimed = claimedUpdaterPointer
        var id = entry.id
        entry.call(animated)
        // Released now, before the next updater runs: an updater that removed itself in this call lets go of
        // what it captured at once (a tracked one, its tracking), as removal promises.
        _ = consume entry
        cvu_u32_store_release(claimed, 0)
        if clock.isTimed { clock.lap(self) }
        let shared = sharedPointer
        while id < limit {
            cvu_stripe_lock(stripe)
            let next = shared.pointee.updaters.next(after: id, upTo: limit)
            if let next { cvu_u32_store_release(claimed, UInt32(truncatingIfNeeded: next.id)) }
            cvu_stripe_unlock(stripe)
            guard let next else { return }
            id = next.id
            next.call(animated)
            cvu_u32_store_release(claimed, 0)
            if clock.isTimed { clock.lap(self) }
        }
    }

    /// The updater a delivery has claimed and not finished calling (low 32 bits of its id; 0: none). Any
    /// thread: read it after taking the lock.
    var claimedUpdaterID: UInt32 {
        cvu_u32_load_acquire(claimedUpdaterPointer)
    }

    /// Whether a turn would still find something to deliver (``ManualScheduler/isIdle``): an update pending
    /// and not suspended (a suspended one waits for `resume()`, not a turn), or requests in the inbox. Main
    /// thread.
    package var hasWorkForTurn: Bool {
        let rules = machinePointer.pointee.rules
        return !isCancelled && (rules.isScheduled && !rules.isSuspended || inboxHasRequests)
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

// The main thread's API of a context (and its recoveries when called elsewhere), and the lifecycle and
// outside entry points.
extension UpdateStorage {
    /// `update(animated:)`. Off the main thread — a mistake — it reports (debug builds stop at the
    /// caller's line) and becomes a forced update in the next main-thread cycle, as a lifecycle refresh
    /// posted there does.
    func update(
        _ flag: Bool?, api: String = "update(animated:)",
        recovery: String = ": it delivers synchronously. Call setNeedsUpdate(animated:) from other threads; "
            + "this call becomes an update in the next main-thread cycle.", file: StaticString, line: UInt
    ) {
        if cvu_transaction_scopes_active(), let current = UpdateTransaction.scoped {
            // Inside `withUpdateTransaction`: the update carries the scope's transaction, on every path (and
            // a misuse still names the API the caller used).
            update(transaction: current.applying(flag), api: api, recovery: recovery, file: file, line: line)
            return
        }
        guard
            isOnSchedulerThreadOrReport(api, recovery: recovery, file: file, line: line)
        else {
            noteRequestElsewhere(file: file, line: line)
            post(.update(flag))
            return
        }
        noteSlowPathRequest(file: file, line: line)
        drainInboxIfNeeded()
        perform(machinePointer.pointee.update(flag, defaultAnimated: animated), forPlainRequest: flag)
    }

    /// `update(transaction:)`, and `update()` inside a scope. Off the main thread — a mistake — it reports
    /// (debug builds stop at the caller's line) and becomes one forced update with `transaction` in the
    /// next main-thread cycle.
    func update(
        transaction: UpdateTransaction, api: String = "update(transaction:)",
        recovery: String = ": it delivers synchronously. Call setNeedsUpdate(transaction:) from other threads; "
            + "this call becomes an update with its transaction in the next main-thread cycle.",
        file: StaticString, line: UInt
    ) {
        // Inside a scope the request joins it (its completions wait for this update too).
        let transaction = transaction.joiningCurrentScope()
        guard isOnSchedulerThreadOrReport(api, recovery: recovery, file: file, line: line)
        else {
            noteRequestElsewhere(file: file, line: line)
            request(transaction, update: true, site: nil)  // off the main thread: to the inbox, as one update
            return
        }
        noteSlowPathRequest(file: file, line: line)
        request(transaction, update: true, site: nil)
    }

    /// A lifecycle event: `update()` on the main thread, a deferred update anywhere else. Called by the
    /// refresh hub, which may reach a context being released on another thread: it holds the scheduler
    /// for the call, or does nothing once the context is gone.
    package func refresh() {
        guard let scheduler = retainedScheduler() else { return }
        withExtendedLifetime(scheduler) {
            // Posted inside `withUpdateTransaction`: the refresh carries the scope's transaction, as `update()`
            // there does (on another thread, to the inbox with it).
            if cvu_transaction_scopes_active(), let current = UpdateTransaction.scoped {
                request(current, update: true, site: nil)
                return
            }
            guard isOnSchedulerThread else {
                post(.update(nil))
                return
            }
            drainInboxIfNeeded()
            perform(machinePointer.pointee.update(nil, defaultAnimated: animated))
        }
    }

    /// `setNeedsUpdate(animated:)` from outside the context (the link: Observation's `onChange`, async
    /// sequences), which may run while the context is being released on another thread: it holds the
    /// scheduler for the call, or does nothing once the context is gone.
    func setNeedsUpdateFromOutside(_ flag: Bool?, site: RequestSite) {
        guard let scheduler = retainedScheduler() else { return }
        withExtendedLifetime(scheduler) { setNeedsUpdate(flag, site: site) }
    }

    func updateIfNeeded(file: StaticString, line: UInt) {
        guard
            isOnSchedulerThreadOrReport(
                "updateIfNeeded()",
                recovery: "; ignored: what is pending is delivered at the end of the main thread's cycle.",
                file: file, line: line)
        else { return }
        // On a pass scheduler, `updateIfNeeded()` is how the pass arrives (UIKit's `updateProperties()`):
        // it runs the pass, which ends the batch, so the next request asks for a pass of its own.
        if !machinePointer.pointee.isDelivering, let pass = withScheduler({ $0 as? any PassDrivenScheduler }) {
            pass.runRequestedPass()
        }
        drainInboxIfNeeded()
        let delivery = machinePointer.pointee.updateIfNeeded(defaultAnimated: animated)
        publishScheduled()
        if let delivery { deliver(delivery) }
    }

    /// Runs `body` and answers whether it requested an update of this context (any request: `nil`,
    /// `false`, `true`, `update()`), even one that changed nothing because an update was already pending.
    /// Main thread, when `updateIfNeeded()` could not deliver what was pending (suspended, or inside an
    /// updater); what `body` requested stays requested, after what was pending before, as the rules
    /// apply it.
    func requestsMade(during body: () -> Void) -> Bool {
        requireMainThread("animateWithFlushedUpdates(using:_:)")
        if machinePointer.pointee.isDelivering {
            // Every request goes to the inbox while updaters run.
            let before = postedCount
            body()
            return postedCount != before
        }
        // Suspended (or the updaters that `updateIfNeeded()` ran asked again): the pending requests, the
        // inbox's included, are set aside, so that those of `body` show; then they are put back and
        // `body`'s applied after them, in order.
        drainInboxIfNeeded()
        let saved = machinePointer.pointee.setPendingAside()
        let savedTransaction = setPendingTransactionAside()
        body()
        // What `body` requested goes after what was pending, partitioned as the rules partition the requests:
        // an early non-animated flush that `body`'s animated request makes after a pending non-animated one
        // shows (and completes) only what was pending before; `body`'s transaction waits for the delivery
        // after it.
        let bodyTransaction = setPendingTransactionAside()
        restorePendingTransaction(savedTransaction)
        guard let meanwhile = machinePointer.pointee.restore(saved) else {
            keepPendingAfter(bodyTransaction)  // (a transaction request always schedules: none here)
            return false
        }
        let replay = machinePointer.pointee.setNeedsUpdate(meanwhile.pendingFlag)
        if replay.isEarlyFlush {
            perform(replay)
            keepPendingAfter(bodyTransaction)
        } else {
            keepPendingAfter(bodyTransaction)
            perform(replay)
        }
        if meanwhile.isForced { perform(machinePointer.pointee.update(nil, defaultAnimated: animated)) }
        return true
    }

    /// Exact on the main thread; elsewhere a snapshot (another thread may change it right after).
    var isUpdatePending: Bool {
        if isOnSchedulerThread { return machinePointer.pointee.rules.isScheduled || inboxHasRequests }
        return isUpdatePendingSnapshot
    }

    /// ``isUpdatePending`` as any thread can read it, from the published flags.
    var isUpdatePendingSnapshot: Bool {
        // The inbox first: the main thread publishes `scheduled` before it clears the inbox flag, so a
        // cleared inbox read here comes with the published `scheduled` (no instant reads both as false).
        inboxHasRequests || cvu_flag_load_acquire(flags + Self.scheduledFlag)
    }

    var isSuspended: Bool {
        requireMainThread("isSuspended")
        return machinePointer.pointee.rules.isSuspended
    }

    func suspend(file: StaticString, line: UInt) {
        guard isOnSchedulerThreadOrReport("suspend()", recovery: "; ignored", file: file, line: line) else { return }
        machinePointer.pointee.suspend()
        noteSuspension()
    }

    /// `resume()`. Off the main thread, or with no `suspend()` to end — mistakes — it reports (debug
    /// builds stop at the caller's line) and is ignored.
    func resume(file: StaticString, line: UInt) {
        guard isOnSchedulerThreadOrReport("resume()", recovery: "; ignored", file: file, line: line) else { return }
        guard machinePointer.pointee.rules.isSuspended else {
            Misuse.recoverable(
                "ViewUpdatingContext.resume() called more times than suspend(); the extra call is ignored",
                label: label.string, file: file, line: line)
            return
        }
        drainInboxIfNeeded()
        let action = machinePointer.pointee.resume(defaultAnimated: animated)
        noteSuspension()
        perform(action)
    }

    /// The number of the delivery under way (or of the last one): main thread, inside updaters.
    var deliverySerial: UInt64 {
        machinePointer.pointee.deliverySerial
    }

    /// Whether the delivery under way was forced (`update()`, a refresh): main thread, inside updaters.
    package var isForcedDelivery: Bool {
        isOnSchedulerThread && machinePointer.pointee.delivering?.isForced == true
    }

    /// Whether the delivery under way is the rules' early non-animated flush: main thread, inside updaters.
    package var isEarlyFlushDelivery: Bool {
        isOnSchedulerThread && machinePointer.pointee.delivering?.isEarlyFlush == true
    }

    /// Whether the caller is on the scheduler's thread; when it is not — a mistake — reports it, naming
    /// `api` and, in `recovery`, what is done instead (debug builds stop at the caller's line).
    private func isOnSchedulerThreadOrReport(
        _ api: String, recovery: String, file: StaticString, line: UInt
    ) -> Bool {
        if isOnSchedulerThread { return true }
        Misuse.recoverable(
            "ViewUpdatingContext.\(api) must be called on the main thread (the scheduler's thread)\(recovery)",
            label: label.string, file: file, line: line)
        return false
    }

    func requireMainThread(_ api: String, because reason: String = "") {
        if !isOnSchedulerThread {
            fatalError(
                "ViewUpdatingContext.\(api) must be called on the main thread (the scheduler's thread)"
                    + (reason.isEmpty ? "" : "; \(reason)"))
        }
    }
}
