import NotificationCoalescing

/// Everything a context holds, stored as the header of its ``UpdateStorage``.
struct UpdateStorageHeader {
    /// What other threads touch, under the storage's lock.
    struct Shared {
        var inbox: [UpdateRequest] = []
        /// Whether the inbox has registered the storage for a turn that has not drained it yet.
        var inboxIsQueued = false
        var updaters = UpdaterList()
        /// Created on first use (Observation tracking, async sequences): most contexts never need one.
        var link: UpdateLink?
        /// Keeps the scheduler alive until the context goes (`cancel()` lets it go): the scheduler holds
        /// the storage while an update is pending, so holding it after that would make a cycle that keeps
        /// both — and a background thread's run loop — alive after a context released with work pending.
        var scheduler: CoalescingScheduler?
    }

    /// The scheduler, for the hot path: called through without a retain and a release. `shared.scheduler`
    /// keeps it alive until the context goes; after that it is used only by callers that hold it
    /// themselves (`retainedScheduler()`), and never after user code that may have released the context
    /// (`UpdateStorage` checks `isCancelled` first).
    let unretainedScheduler: Unmanaged<CoalescingScheduler>
    var machine = UpdateStateMachine()
    var shared = Shared()

    init(scheduler: CoalescingScheduler) {
        unretainedScheduler = Unmanaged.passUnretained(scheduler)
        shared.scheduler = scheduler
    }
}
