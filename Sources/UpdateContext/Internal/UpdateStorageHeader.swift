import NotificationCoalescing

/// Everything a context holds, stored as the header of its ``UpdateStorage``.
struct UpdateStorageHeader {
    /// What other threads touch, under the storage's lock.
    struct Shared {
        var inbox: [UpdateRequest] = []
        /// Whether the inbox has registered the storage for a turn that has not drained it yet.
        var inboxIsQueued = false
        /// Whether recording noted a first request for this context's next delivery (`RecordingLedger`): a
        /// delivery reads it with the first updater, under the lock it takes anyway, and looks at the ledger
        /// (a global lock) only when it is set. In what would be padding.
        var hasRecordedSite = false
        /// Counts the requests put in the inbox (wrapping): what `animateWithFlushedUpdates` compares to
        /// learn whether its changes requested anything while updaters run. Beside the flag above, in
        /// what would be padding.
        var posted: UInt32 = 0
        var updaters = UpdaterList()
        /// Created on first use (Observation tracking, async sequences): most contexts never need one.
        var link: UpdateLink?
        /// Keeps the scheduler alive until the context goes (`cancel()` lets it go): the scheduler holds
        /// the storage while an update is pending, so holding it after that would make a cycle that keeps
        /// both — and a background thread's run loop — alive after a context released with work pending.
        var scheduler: CoalescingScheduler?
    }

    // The declaration order is the layout `UpdateStorage.Layout` computes (checked once, in `make`).
    /// The state machine: main thread (the scheduler's thread) only.
    var machine = UpdateStateMachine()
    /// The scheduler, for the hot path: called through without a retain and a release. `shared.scheduler`
    /// keeps it alive until the context goes; after that it is used only by callers that hold it
    /// themselves (`retainedScheduler()`), and never after user code that may have released the context
    /// (`UpdateStorage` checks `isCancelled` first).
    let unretainedScheduler: Unmanaged<CoalescingScheduler>
    var shared = Shared()
    /// The low 32 bits of the id of the updater a delivery has claimed and not finished calling (0: none):
    /// stored by the delivery under the lock when it claims, cleared without the lock after the call; read
    /// by a removal, after it took the lock, to tell whether the call of what it removed is under way.
    /// Atomic (CCoalescingSupport's `cvu_u32_*`). Ids that share their low bits only make a removal
    /// answer "under way" when no call is: never the other way.
    var claimedUpdater: UInt32 = 0
    /// What diagnostics call the context (four bytes: an index into the labels' table). Immutable.
    let label: DiagnosticLabel

    init(scheduler: CoalescingScheduler, label: DiagnosticLabel) {
        unretainedScheduler = Unmanaged.passUnretained(scheduler)
        shared.scheduler = scheduler
        self.label = label
    }
}
