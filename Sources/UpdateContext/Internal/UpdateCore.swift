import Foundation
import NotificationCoalescing
import Synchronization

/// One request, as it waits in the inbox (made off the main thread, or while updaters run).
enum UpdateRequest: Equatable, Sendable {
    case setNeedsUpdate(Bool?)
    case update(Bool?)
}

/// An updater as stored: called on the main thread with the delivery's flag.
struct UpdaterEntry {
    let id: UInt64
    let call: (Bool) -> Void
}

/// The registered updaters, in registration order. The first is stored inline: most contexts have
/// exactly one, and then no array is allocated (a denser context is a faster one in a large fan-out).
struct UpdaterList {
    // Invariant: `rest` is empty whenever `first` is nil.
    private var first: UpdaterEntry?
    private var rest: [UpdaterEntry] = []

    var count: Int { first == nil ? 0 : 1 + rest.count }

    /// The only updater's closure, when there is exactly one.
    var sole: ((Bool) -> Void)? { rest.isEmpty ? first?.call : nil }

    var entries: [UpdaterEntry] {
        guard let first else { return [] }
        return [first] + rest
    }

    mutating func append(_ entry: UpdaterEntry) {
        if first == nil {
            first = entry
        } else {
            rest.append(entry)
        }
    }

    /// Removes the updater with `id`; returns what was removed (to be released outside the lock).
    mutating func remove(id: UInt64) -> [UpdaterEntry] {
        if let head = first, head.id == id {
            first = rest.isEmpty ? nil : rest.removeFirst()
            return [head]
        }
        let removed = rest.filter { $0.id == id }
        rest.removeAll { $0.id == id }
        return removed
    }

    /// Removes everything; returns it (to be released outside the lock).
    mutating func removeAll() -> [UpdaterEntry] {
        defer {
            first = nil
            rest = []
        }
        return entries
    }
}

/// The storage of a ``ViewUpdatingContext``: the rules, the updaters, the inbox and its place in the
/// scheduler. The scheduler holds this, never the context, so releasing the context frees it at once.
///
/// Two worlds meet here. Everything a delivery needs on the main thread (the ``UpdateRules`` value, the
/// cached updater list, the re-entrancy flag) is confined to the main thread and read without a lock,
/// which is what keeps a request on an already-dirty context at a few nanoseconds. Everything other
/// threads touch (the inbox of their requests, the registered updaters) is behind `shared`, with atomic
/// hints so that the main thread only takes the lock when there is something to take.
final class UpdateCore: TurnClient, @unchecked Sendable {
    // @unchecked Sendable: the `main*` properties below are read and written only on the scheduler's
    // thread — every entry point checks `scheduler.isCurrent` first, or is `performTurn`, which the
    // scheduler calls there. Everything else is immutable, atomic, or inside `shared`.
    // The `main*` properties are `@exclusivity(unchecked)`: confined to one thread, and never mutated
    // across a call out to user code (updaters run on copies), so no access can overlap another; the
    // dynamic checks would cost a thread-local lookup on every request.
    // Layout: what one request and one delivery touch comes first and fits one cache line (header 16,
    // scheduler 8, sole updater 16, rules 8, last turn 8, six flags), so that a fan-out over 100 000
    // contexts reads one line per context here; the rest is read only when updaters change.
    let scheduler: CoalescingScheduler
    /// The only updater, when there is exactly one (the common case): called without touching the
    /// array's storage.
    @exclusivity(unchecked) private var mainSoleUpdater: ((Bool) -> Void)?
    @exclusivity(unchecked) private var mainRules = UpdateRules()
    /// The serial of the last turn this core ran in (0: none): it may be listed twice in one turn (once
    /// from the main thread, once from the inbox) and must deliver at most once per cycle.
    @exclusivity(unchecked) private var mainLastTurn: UInt64 = 0
    @exclusivity(unchecked) private var mainIsDelivering = false
    @exclusivity(unchecked) private var mainIsQueued = false
    /// Set (under the lock) when the inbox gets a request; cleared when the main thread drains it.
    private let inboxHint = Atomic<Bool>(false)
    /// Set when updaters are added or removed; the main thread refreshes its copy when it sees it.
    private let updatersChanged = Atomic<Bool>(false)
    private let cancelled = Atomic<Bool>(false)
    /// `mainRules.isScheduled`, published for ``isUpdatePending`` on other threads.
    private let scheduledHint = Atomic<Bool>(false)
    private let defaultAnimated: Atomic<Bool>

    @exclusivity(unchecked) private var mainUpdaters: [UpdaterEntry] = []

    private struct Shared {
        var inbox: [UpdateRequest] = []
        var inboxIsQueued = false
        var isCancelled = false
        var updaters = UpdaterList()
        var nextUpdaterID: UInt64 = 0
        /// Created on first use (Observation tracking, async sequences): most contexts never need one.
        var link: UpdateLink?
    }

    private let shared = Locked(Shared())

    init(animated: Bool, scheduler: CoalescingScheduler) {
        defaultAnimated = Atomic(animated)
        self.scheduler = scheduler
    }

    var animated: Bool {
        get { defaultAnimated.load(ordering: .relaxed) }
        set { defaultAnimated.store(newValue, ordering: .relaxed) }
    }

    // MARK: Requests

    @inline(__always)
    func setNeedsUpdate(_ flag: Bool?) {
        let onOwnerThread = scheduler.isCurrent
        // The fast path: an already-dirty context with nothing new takes no lock and allocates nothing.
        if onOwnerThread && !mainIsDelivering && !inboxHint.load(ordering: .acquiring) && mainRules.isNoOp(flag) {
            return
        }
        submit(.setNeedsUpdate(flag), onOwnerThread: onOwnerThread)
    }

    func update(_ flag: Bool?) {
        precondition(
            scheduler.isCurrent,
            "ViewUpdatingContext.update(animated:) called off the main thread; it delivers synchronously, "
                + "and updaters run only on the main thread. Call setNeedsUpdate(animated:) from other threads.")
        // Re-entrant (inside an updater), `submit` defers it: never deliver recursively.
        submit(.update(flag), onOwnerThread: true)
    }

    /// A lifecycle event: `update()` on the main thread, a deferred update anywhere else.
    func refresh() {
        submit(.update(nil), onOwnerThread: scheduler.isCurrent)
    }

    /// The one routing of every request: applied now on the main thread (after what the inbox holds,
    /// to keep arrival order), or put in the inbox when made elsewhere or while updaters run.
    private func submit(_ request: UpdateRequest, onOwnerThread: Bool) {
        guard onOwnerThread && !mainIsDelivering else {
            post(request)
            return
        }
        if inboxHint.load(ordering: .acquiring) { drainInbox() }
        apply(request)
    }

    func updateIfNeeded() {
        requireMainThread("updateIfNeeded()")
        guard !mainIsDelivering else { return }
        if inboxHint.load(ordering: .acquiring) { drainInbox() }
        let value = mainRules.endOfCycle(defaultAnimated: animated)
        publishScheduled()
        if let value { deliver(value) }
    }

    /// Exact on the main thread; elsewhere a snapshot (another thread may change it right after).
    var isUpdatePending: Bool {
        if scheduler.isCurrent { return mainRules.isScheduled || inboxHint.load(ordering: .acquiring) }
        return scheduledHint.load(ordering: .acquiring) || inboxHint.load(ordering: .acquiring)
    }

    @inline(__always)
    private func publishScheduled() {
        let scheduled = mainRules.isScheduled
        if scheduledHint.load(ordering: .relaxed) != scheduled {
            scheduledHint.store(scheduled, ordering: .releasing)
        }
    }

    var isSuspended: Bool {
        requireMainThread("isSuspended")
        return mainRules.isSuspended
    }

    func suspend() {
        requireMainThread("suspend()")
        mainRules.suspend()
    }

    func resume() {
        requireMainThread("resume()")
        if !mainIsDelivering, inboxHint.load(ordering: .acquiring) { drainInbox() }
        let value = mainRules.resume(defaultAnimated: animated)
        publishScheduled()
        if let value {
            if mainIsDelivering {
                post(.update(value))
            } else {
                deliver(value)
            }
        }
    }

    private func requireMainThread(_ api: String) {
        precondition(scheduler.isCurrent, "ViewUpdatingContext.\(api) must be used on the main thread")
    }

    // MARK: Main thread

    /// Applies one request to the rules and does what they say. Main thread, not delivering.
    private func apply(_ request: UpdateRequest) {
        switch request {
        case .setNeedsUpdate(let flag):
            let outcome = mainRules.request(flag)
            publishScheduled()
            if let value = outcome.deliverNow { deliver(value) }
            if outcome.needsTurn, !mainIsQueued {
                mainIsQueued = true
                scheduler.scheduleOnOwnerThread(self)
            }
        case .update(let flag):
            let value = mainRules.update(flag, defaultAnimated: animated)
            publishScheduled()
            if let value { deliver(value) }
        }
    }

    private func drainInbox() {
        let requests = shared.withLock { shared -> [UpdateRequest] in
            inboxHint.store(false, ordering: .relaxed)
            shared.inboxIsQueued = false
            defer { shared.inbox.removeAll() }
            return shared.inbox
        }
        for request in requests { apply(request) }
    }

    private func deliver(_ value: Bool) {
        if cancelled.load(ordering: .relaxed) { return }
        if updatersChanged.load(ordering: .relaxed) {
            // Clear first, then copy: a change made after the copy sets the flag again.
            updatersChanged.store(false, ordering: .relaxed)
            (mainSoleUpdater, mainUpdaters) = shared.withLock { shared in
                (shared.updaters.sole, shared.updaters.count > 1 ? shared.updaters.entries : [])
            }
        }
        mainIsDelivering = true
        defer { mainIsDelivering = false }
        if let sole = mainSoleUpdater {
            sole(value)
            return
        }
        for updater in mainUpdaters {
            updater.call(value)
        }
    }

    func performTurn(_ turn: SchedulerTurn) -> Bool {
        if mainIsDelivering { return true }  // a nested run loop inside an updater: wait for the outer cycle
        if mainLastTurn == turn.serial { return false }  // already ran in this turn; later requests wait for the next
        mainLastTurn = turn.serial
        mainIsQueued = false
        if inboxHint.load(ordering: .acquiring) { drainInbox() }
        let value = mainRules.endOfCycle(defaultAnimated: animated)
        publishScheduled()
        if let value { deliver(value) }
        return false
    }

    // MARK: Any thread

    /// Puts a request in the inbox, applied on the main thread at its next turn, in arrival order.
    private func post(_ request: UpdateRequest) {
        let needsTurn = shared.withLock { shared -> Bool in
            if shared.isCancelled { return false }
            switch (shared.inbox.last, request) {
            case (.setNeedsUpdate?, .setNeedsUpdate(nil)):
                break  // changes nothing after another request of the same kind
            case (.setNeedsUpdate(let last)?, .setNeedsUpdate(let flag)) where last == flag:
                break
            default:
                shared.inbox.append(request)
            }
            inboxHint.store(true, ordering: .releasing)
            if shared.inboxIsQueued { return false }
            shared.inboxIsQueued = true
            return true
        }
        if needsTurn { scheduler.schedule(self) }
    }

    func addUpdater(_ call: @escaping (Bool) -> Void) -> UInt64 {
        shared.withLock { shared -> UInt64 in
            shared.nextUpdaterID += 1
            shared.updaters.append(UpdaterEntry(id: shared.nextUpdaterID, call: call))
            updatersChanged.store(true, ordering: .relaxed)
            return shared.nextUpdaterID
        }
    }

    func removeUpdater(_ id: UInt64) {
        let removed = shared.withLock { shared -> [UpdaterEntry] in
            let removed = shared.updaters.remove(id: id)
            updatersChanged.store(true, ordering: .relaxed)
            return removed
        }
        _ = removed  // released outside the lock: an updater's captures may run deinit code
    }

    func removeAllUpdaters() {
        let removed = shared.withLock { shared -> [UpdaterEntry] in
            updatersChanged.store(true, ordering: .relaxed)
            return shared.updaters.removeAll()
        }
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

    /// The context is gone: deliver nothing more, drop the updaters and the inbox, cut the link.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        let dropped = shared.withLock { shared -> ([UpdaterEntry], [UpdateRequest], UpdateLink?) in
            shared.isCancelled = true
            defer {
                shared.inbox.removeAll()
                shared.link = nil
            }
            updatersChanged.store(true, ordering: .relaxed)
            return (shared.updaters.removeAll(), shared.inbox, shared.link)
        }
        dropped.2?.cut()
    }
}
