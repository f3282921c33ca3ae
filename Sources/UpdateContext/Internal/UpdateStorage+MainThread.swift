import CCoalescingSupport
import Foundation
import NotificationCoalescing

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
    func refresh() {
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
        if let pass = withScheduler({ $0 as? PassScheduler }), pass.hasRequestedTurn,
            !machinePointer.pointee.isDelivering
        {
            pass.runPass()
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

    /// ``isUpdatePending`` as any thread can read it, from the published flags (the watchdog's view too).
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
    var isForcedDelivery: Bool {
        isOnSchedulerThread && machinePointer.pointee.delivering?.isForced == true
    }

    /// Whether the delivery under way is the rules' early non-animated flush: main thread, inside updaters.
    var isEarlyFlushDelivery: Bool {
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
