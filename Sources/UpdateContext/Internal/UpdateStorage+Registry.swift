import CCoalescingSupport
import NotificationCoalescing

/// The parts of ``UpdateStorage`` that any thread uses and no delivery does: the updater registry, the
/// link for outside callbacks, and cancellation when the context goes. Everything here runs under the
/// storage's lock and releases what it removed after leaving it.
extension UpdateStorage {
    func addUpdater(_ call: @escaping (Bool) -> Void) -> UInt64 {
        withShared { $0.updaters.append(call) }
    }

    /// Adds the `ViewUpdating` owner's updater (`startUpdatingView()`), unless it is connected now: one lock
    /// for the check and the registration, the one `removeAllUpdaters()` clears the mark under, so that a
    /// removal racing a start leaves the owner connected once or not at all. Returns the id, or `nil`.
    func addOwnerUpdater(_ call: @escaping (Bool) -> Void) -> UInt64? {
        withShared { shared in
            guard markOwnerConnected() else { return nil }
            return shared.updaters.append(call)
        }
    }

    /// Removes updater `id`: its token's `remove()` (`RegistrationTarget`), from any thread. Returns
    /// whether a delivery had claimed it and was still calling it (see `claimedUpdater`).
    func removeRegistration(_ id: UInt64) -> Bool {
        let (removed, underWay) = withShared { shared -> (UpdaterEntry?, Bool) in
            let removed = shared.updaters.remove(id: id)
            return (removed, removed != nil && claimedUpdaterID == UInt32(truncatingIfNeeded: id))
        }
        _ = removed  // released outside the lock: an updater's captures may run deinit code
        return underWay
    }

    /// Whether updater `id` is still registered (any thread).
    func hasUpdater(_ id: UInt64) -> Bool {
        !isCancelled && withShared { $0.updaters.contains(id: id) }
    }

    func removeAllUpdaters() {
        _ = removeAllUpdatersReportingCallUnderWay()
    }

    /// Removes every updater; returns whether a delivery was calling one of them.
    func removeAllUpdatersReportingCallUnderWay() -> Bool {
        let (removed, underWay) = withShared { shared -> ([UpdaterEntry], Bool) in
            let removed = shared.updaters.removeAll()
            markOwnerDisconnected()
            return (removed, !removed.isEmpty && claimedUpdaterID != 0)
        }
        _ = removed
        return underWay
    }

    /// The number of requests put in the inbox so far (wrapping): main thread, to compare.
    var postedCount: UInt32 {
        withShared { $0.posted }
    }

    var updaterCount: Int {
        withShared { $0.updaters.count }
    }

    /// How many sequence subscriptions run (without creating a link for the question).
    var runningSubscriptions: Int {
        withShared { $0.link }?.runningTasks ?? 0
    }

    /// The link that outside callbacks hold (created on first use).
    var link: UpdateLink {
        withShared { shared in
            if let link = shared.link { return link }
            let link = UpdateLink(self)
            if isCancelled { link.cut() }
            shared.link = link
            return link
        }
    }

    /// The context is gone: deliver nothing more; drop the updaters, the inbox and the link now.
    func cancel() {
        let dropped = withShared {
            shared -> ([UpdaterEntry], [UpdateRequest], UpdateLink?, CoalescingScheduler?) in
            cvu_flag_store_release(flags + Self.cancelledFlag, true)
            defer {
                shared.inbox.removeAll()
                shared.link = nil
                shared.scheduler = nil
            }
            return (shared.updaters.removeAll(), shared.inbox, shared.link, shared.scheduler)
        }
        RecordingLedger.forgetAfterRelease(self)
        dropTransactions(inbox: dropped.1, link: dropped.2)
        dropped.2?.cut()
        // The scheduler (maybe a user's subclass) is released here, after the lock: it no longer holds
        // this storage alive through a cycle, and goes now if nothing else uses it.
    }

    /// The scheduler, retained, while the context lives (`nil` once it is gone): what a caller from
    /// outside the context (a lifecycle refresh, the link) holds while it calls in.
    func retainedScheduler() -> CoalescingScheduler? {
        withShared { $0.scheduler }
    }
}
