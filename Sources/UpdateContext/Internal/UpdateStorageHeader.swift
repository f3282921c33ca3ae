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
    }

    let scheduler: CoalescingScheduler
    /// The same scheduler, for the hot path: called through without a retain and a release (`scheduler`
    /// above keeps it alive for as long as this header lives).
    let unretainedScheduler: Unmanaged<CoalescingScheduler>
    var machine = UpdateStateMachine()
    var shared = Shared()

    init(scheduler: CoalescingScheduler) {
        self.scheduler = scheduler
        unretainedScheduler = Unmanaged.passUnretained(scheduler)
    }
}
