import CCoalescingSupport
import NotificationCoalescing

/// The storage of a ``ViewUpdatingContext``: it feeds events to the ``UpdateStateMachine``, performs the
/// actions it returns, and calls updaters only outside its lock. The scheduler holds this, never the
/// context, so releasing the context frees it at once.
///
/// Two worlds meet here. The state machine is confined to the main thread (the scheduler's thread) and
/// read without a lock, which keeps a request on an already-dirty context at a few nanoseconds.
/// What other threads touch — the inbox of their requests, the updaters, the link — is in `shared`,
/// behind a lock, with one-byte atomic flags beside it so that the main thread takes the lock only
/// when there is something to take.
///
/// The path of a request: ``setNeedsUpdate(_:)`` → (main thread) the machine's `setNeedsUpdate` →
/// `.askForTurn` → `scheduleOnOwnerThread` → at the end of the cycle the scheduler calls
/// ``performTurn(_:)`` → `turnBegan`, the inbox applied, `turnEnded` → ``deliver(_:)`` → each updater.
/// From another thread: ``post(_:)`` puts it in the inbox and registers for the next turn (one wake-up),
/// where it is applied and delivered in that same turn.
final class UpdateStorage: TurnClient, @unchecked Sendable {
    // @unchecked Sendable: `machine` is read and written only on the scheduler's thread — every entry
    // point checks `scheduler.isCurrent` first, or is `performTurn`, which the scheduler calls there.
    // `machine` is `@exclusivity(unchecked)`: confined to one thread, and never mutated across a call out
    // to user code (updaters run after the event returned), so no access can overlap another; the dynamic
    // checks would cost a thread-local lookup on every request. Everything else is immutable, atomic
    // (`flags`), or inside `shared`.
    let scheduler: CoalescingScheduler
    @exclusivity(unchecked) private var machine = UpdateStateMachine()
    private let shared: Locked<Shared>
    /// One-byte atomic flags in `shared`'s allocation (indexes below).
    private let flags: UnsafeMutablePointer<UInt8>

    private static let inboxFlag = 0  // the inbox holds requests (set under the lock)
    private static let scheduledFlag = 1  // the machine's `isScheduled`, for other threads
    private static let cancelledFlag = 2  // the context is gone
    private static let animatedFlag = 3  // the default `animated`

    private struct Shared {
        var inbox: [UpdateRequest] = []
        /// Whether the inbox has registered this storage for a turn that has not drained it yet.
        var inboxIsQueued = false
        var isCancelled = false
        var updaters = UpdaterList()
        /// Created on first use (Observation tracking, async sequences): most contexts never need one.
        var link: UpdateLink?
    }

    init(animated: Bool, scheduler: CoalescingScheduler) {
        self.scheduler = scheduler
        shared = Locked(Shared())
        flags = shared.flags
        cvu_flag_store_relaxed(flags + Self.animatedFlag, animated)
    }

    var animated: Bool {
        get { cvu_flag_load_relaxed(flags + Self.animatedFlag) }
        set { cvu_flag_store_relaxed(flags + Self.animatedFlag, newValue) }
    }

    private var inboxHasRequests: Bool { cvu_flag_load_acquire(flags + Self.inboxFlag) }
    private var isCancelled: Bool { cvu_flag_load_acquire(flags + Self.cancelledFlag) }

    // MARK: Requests

    @inline(__always)
    func setNeedsUpdate(_ flag: Bool?) {
        guard scheduler.isCurrent else {
            post(.setNeedsUpdate(flag))
            return
        }
        // The fast path: an already-dirty context with nothing new takes no lock and allocates nothing.
        if !inboxHasRequests && machine.isNoOp(flag) { return }
        drainInboxIfNeeded()
        perform(machine.setNeedsUpdate(flag))
    }

    func update(_ flag: Bool?) {
        requireMainThread(
            "update(animated:)",
            because: "it delivers synchronously, and updaters run only on the main thread. "
                + "Call setNeedsUpdate(animated:) from other threads.")
        drainInboxIfNeeded()
        perform(machine.update(flag, defaultAnimated: animated))
    }

    /// A lifecycle event: `update()` on the main thread, a deferred update anywhere else.
    func refresh() {
        guard scheduler.isCurrent else {
            post(.update(nil))
            return
        }
        drainInboxIfNeeded()
        perform(machine.update(nil, defaultAnimated: animated))
    }

    func updateIfNeeded() {
        requireMainThread("updateIfNeeded()")
        drainInboxIfNeeded()
        let delivery = machine.updateIfNeeded(defaultAnimated: animated)
        publishScheduled()
        if let delivery { deliver(delivery) }
    }

    /// Exact on the main thread; elsewhere a snapshot (another thread may change it right after).
    var isUpdatePending: Bool {
        if scheduler.isCurrent { return machine.rules.isScheduled || inboxHasRequests }
        return cvu_flag_load_acquire(flags + Self.scheduledFlag) || inboxHasRequests
    }

    var isSuspended: Bool {
        requireMainThread("isSuspended")
        return machine.rules.isSuspended
    }

    func suspend() {
        requireMainThread("suspend()")
        machine.suspend()
    }

    func resume() {
        requireMainThread("resume()")
        drainInboxIfNeeded()
        perform(machine.resume(defaultAnimated: animated))
    }

    /// Whether the delivery under way was forced (`update()`, a refresh): main thread, inside updaters.
    var isForcedDelivery: Bool {
        scheduler.isCurrent && machine.delivering?.isForced == true
    }

    private func requireMainThread(_ api: String, because reason: String = "") {
        precondition(
            scheduler.isCurrent,
            "ViewUpdatingContext.\(api) must be called on the main thread (the scheduler's thread)"
                + (reason.isEmpty ? "" : "; \(reason)"))
    }

    // MARK: Performing actions (main thread)

    /// The one place where the machine's answers are carried out.
    private func perform(_ action: UpdateStateMachine.Action) {
        publishScheduled()
        switch action {
        case .none:
            break
        case .askForTurn:
            scheduler.scheduleOnOwnerThread(self)
        case .deliverNow(let delivery, let askForTurn):
            if askForTurn { scheduler.scheduleOnOwnerThread(self) }
            deliver(delivery)
        case .deferToInbox(let request):
            post(request)
        }
    }

    @inline(__always)
    private func publishScheduled() {
        let scheduled = machine.rules.isScheduled
        if cvu_flag_load_relaxed(flags + Self.scheduledFlag) != scheduled {
            cvu_flag_store_release(flags + Self.scheduledFlag, scheduled)
        }
    }

    /// Applies the inbox first, so that a main-thread request comes after what other threads asked
    /// before it. Not while updaters run: what they ask waits there for a later cycle.
    @inline(__always)
    private func drainInboxIfNeeded() {
        if inboxHasRequests && !machine.isDelivering { drainInbox() }
    }

    /// Applies what other threads (and re-entrant calls) put in the inbox, in arrival order.
    private func drainInbox() {
        let requests = shared.withLock { shared -> [UpdateRequest] in
            cvu_flag_store_relaxed(flags + Self.inboxFlag, false)
            shared.inboxIsQueued = false
            defer { shared.inbox.removeAll() }
            return shared.inbox
        }
        for request in requests {
            perform(machine.apply(request, defaultAnimated: animated))
        }
    }

    /// Calls every updater registered when the delivery began, in order, each with the same flag.
    ///
    /// Each entry is taken under the lock and called outside it, so an updater removed meanwhile (by
    /// an earlier updater, from another thread, or with the context) is never called.
    private func deliver(_ delivery: Delivery) {
        if isCancelled {
            machine.cancel()
            return
        }
        machine.deliveryBegan(delivery)
        defer { machine.deliveryEnded() }
        var (entry, limit) = shared.withLock { shared in
            (shared.updaters.next(after: 0, upTo: .max), shared.updaters.newestID)
        }
        while let current = entry {
            current.call(delivery.animated)
            if current.id >= limit { break }
            entry = shared.withLock { $0.updaters.next(after: current.id, upTo: limit) }
        }
    }

    func performTurn(_ turn: SchedulerTurn) -> Bool {
        if isCancelled { machine.cancel() }
        switch machine.turnBegan(serial: turn.serial) {
        case .skip: return false
        case .park: return true
        case .run: break
        }
        drainInboxIfNeeded()
        let delivery = machine.turnEnded(defaultAnimated: animated)
        publishScheduled()
        if let delivery { deliver(delivery) }
        return false
    }

    // MARK: Any thread

    /// Puts a request in the inbox, applied on the main thread at its next turn, in arrival order.
    private func post(_ request: UpdateRequest) {
        let needsTurn = shared.withLock { shared -> Bool in
            if shared.isCancelled { return false }
            UpdateStateMachine.enqueue(request, into: &shared.inbox)
            cvu_flag_store_release(flags + Self.inboxFlag, true)
            if shared.inboxIsQueued { return false }
            shared.inboxIsQueued = true
            return true
        }
        if needsTurn { scheduler.schedule(self) }
    }

    func addUpdater(_ call: @escaping (Bool) -> Void) -> UInt64 {
        shared.withLock { $0.updaters.append(call) }
    }

    func removeUpdater(_ id: UInt64) {
        let removed = shared.withLock { $0.updaters.remove(id: id) }
        _ = removed  // released outside the lock: an updater's captures may run deinit code
    }

    func removeAllUpdaters() {
        let removed = shared.withLock { $0.updaters.removeAll() }
        _ = removed
    }

    var updaterCount: Int {
        shared.withLock { $0.updaters.count }
    }

    /// How many sequence subscriptions run (without creating a link for the question).
    var runningSubscriptions: Int {
        shared.withLock { $0.link }?.runningTasks ?? 0
    }

    /// The link that outside callbacks hold (created on first use).
    var link: UpdateLink {
        shared.withLock { shared in
            if let link = shared.link { return link }
            let link = UpdateLink(self)
            if shared.isCancelled { link.cut() }
            shared.link = link
            return link
        }
    }

    /// The context is gone: deliver nothing more; drop the updaters, the inbox and the link now.
    func cancel() {
        let dropped = shared.withLock { shared -> ([UpdaterEntry], [UpdateRequest], UpdateLink?) in
            shared.isCancelled = true
            cvu_flag_store_release(flags + Self.cancelledFlag, true)
            defer {
                shared.inbox.removeAll()
                shared.link = nil
            }
            return (shared.updaters.removeAll(), shared.inbox, shared.link)
        }
        dropped.2?.cut()
    }
}
