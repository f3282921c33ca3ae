import CCoalescingSupport
import CoalescingRuntime
import Foundation

/// The storage of a ``ViewUpdatingContext``: it feeds events to the ``UpdateStateMachine``, performs the
/// actions it returns, and calls updaters only outside its lock. The scheduler holds this, never the
/// context, so releasing the context frees it at once.
///
/// Two worlds meet here. The state machine is confined to the main thread (the scheduler's thread) and
/// read without a lock, which keeps a request on an already-dirty context at a few nanoseconds.
/// What other threads touch — the inbox of their requests, the updaters, the link — is in `shared`,
/// behind a lock, with one-byte atomic flags (`flags`) so that the main thread takes the
/// lock only when there is something to take.
///
/// The path of a request: ``setNeedsUpdate(_:site:)`` (unless it is a no-op) → ``submit(_:update:site:)``, where
/// every request enters (plain, or carrying a transaction) → (main thread) ``apply(_:carrying:note:)`` → the machine's
/// `apply` → `.askForTurn` → ``perform(_:note:)`` → `scheduleOnOwnerThread` → at the end of the cycle the scheduler calls
/// ``performTurn(_:)`` → `turnBegan`, the inbox applied, `turnEnded` → ``deliver(_:)`` → each updater.
/// From another thread: ``post(_:carrying:note:)`` puts it in the inbox and registers for the next turn (one wake-up),
/// where it is applied and delivered in that same turn.
package final class UpdateStorage: TurnClient, @unchecked Sendable {
    // @unchecked Sendable: `machine` is read and written only on the scheduler's
    // thread — every entry point checks `isOnSchedulerThread` first, or is `performTurn`, which the scheduler
    // calls there — and never across a call out to user code (updaters run after the event returned).
    // `shared` is read and written only under this object's striped lock (`withShared`). The flag bytes only
    // with the atomic functions of CCoalescingSupport. The rest is immutable.
    //
    // Both confined properties are `@exclusivity(unchecked)`: the confinement and the lock make the dynamic
    // exclusivity checks of a class property (a thread-local lookup on every access, on the request path)
    // unnecessary. The lock is striped (`StripedLocks`): a `pthread_mutex_t` alone is 40 bytes on Linux, and
    // every critical section here is a few instructions that never call out.

    /// What other threads touch, under the storage's lock. (The small fields last: the fields after it use
    /// their room.)
    struct Shared {
        var inbox: [InboxEntry] = []
        var updaters = UpdaterList()
        /// Created on the first transaction (see `TransactionLedger`): its `pending` is read and written here.
        var ledger: TransactionLedger?
        /// Created on first use (Observation tracking, async sequences): most contexts never need one.
        var link: UpdateLink?
        /// Keeps the scheduler alive until the context goes (`cancel()` lets it go): the scheduler holds
        /// the storage while an update is pending, so holding it after that would make a cycle that keeps
        /// both — and a background thread's run loop — alive after a context released with work pending.
        var scheduler: CoalescingScheduler?
        /// Whether a `ViewUpdating` object connected its `updateView(animated:)` (`startUpdatingView()`, until
        /// `removeUpdaters()`).
        var ownerConnected = false
        /// Whether the context joined a refresh hub (set once, before the context is shared).
        var refreshes = false
        /// Whether the inbox has registered the storage for a turn that has not drained it yet.
        var inboxIsQueued = false
    }

    // The fields in this order fit the smallest allocation (an idle context ≤ 300 B with the flags' own).
    /// The state machine: main thread (the scheduler's thread) only.
    @exclusivity(unchecked) var machine = UpdateStateMachine()
    /// What other threads touch: only inside `withShared`.
    @exclusivity(unchecked) private var shared = Shared()
    /// What diagnostics call the context (four bytes: an index into the labels' table).
    package let label: DiagnosticLabel
    /// The scheduler, for the hot path: called through without a retain and a release. `shared.scheduler`
    /// keeps it alive until the context goes; after that it is used only by callers that hold it
    /// themselves (`retainedScheduler()`), and never after user code that may have released the context
    /// (`isCancelled` is checked first).
    private let unretainedScheduler: Unmanaged<CoalescingScheduler>
    /// The flag bytes (see the indexes below), in an allocation of their own: the atomic functions need an
    /// address that stays put, which a class's stored property does not promise.
    let flags: UnsafeMutablePointer<UInt8>

    static let inboxFlag = 0  // the inbox holds requests (set under the lock)
    static let scheduledFlag = 1  // the machine's state for other threads: see `publishScheduled()`
    static let cancelledFlag = 2  // the context is gone
    private static let animatedFlag = 3  // the default `animated`
    private static let flagCount = 4

    /// The bits of the scheduled byte (see `publishScheduled()`).
    enum Published {
        static let scheduled: UInt8 = 1  // the machine's `isScheduled`
        static let nonAnimated: UInt8 = 2  // the pending explicit flag is `false` (only with `scheduled`)
        static let suspended: UInt8 = 4  // for descriptions
    }

    init(animated: Bool, scheduler: CoalescingScheduler, label: DiagnosticLabel) {
        unretainedScheduler = Unmanaged.passUnretained(scheduler)
        shared.scheduler = scheduler
        self.label = label
        flags = .allocate(capacity: Self.flagCount)
        flags.initialize(repeating: 0, count: Self.flagCount)
        cvu_flag_store_relaxed(flags + Self.animatedFlag, animated)
    }

    deinit {
        flags.deallocate()
        // A given label's entry goes with the last holder of the storage (the scheduler, a link's face may
        // outlive the context): until then reports and descriptions still name it.
        label.release()
    }

    /// The scheduler, unretained (see `unretainedScheduler`): callers hold it alive.
    @inline(__always)
    func withScheduler<Result>(_ body: (CoalescingScheduler) -> Result) -> Result {
        unretainedScheduler._withUnsafeGuaranteedRef(body)
    }

    /// Whether the calling thread is the scheduler's (the main thread): asked on every request, so asked
    /// without retaining the scheduler.
    @inline(__always)
    package var isOnSchedulerThread: Bool {
        unretainedScheduler._withUnsafeGuaranteedRef { $0.isCurrentFast }
    }

    /// Runs `body` on the shared state under the lock. Never call out to user code inside.
    @inline(__always)
    func withShared<Result>(_ body: (inout Shared) -> Result) -> Result {
        StripedLocks.withLock(for: self) { body(&shared) }
    }

    var animated: Bool {
        get { cvu_flag_load_relaxed(flags + Self.animatedFlag) }
        set { cvu_flag_store_relaxed(flags + Self.animatedFlag, newValue) }
    }

    /// Whether the context observes lifecycle events (it then leaves the refresh hub when it goes). Any thread.
    var refreshes: Bool {
        get { withShared { $0.refreshes } }
        set { withShared { $0.refreshes = newValue } }
    }

    /// Whether the `ViewUpdating` owner is connected now (a hint: ``addOwnerUpdater(_:)`` decides). Any thread.
    var isOwnerConnectedNow: Bool {
        withShared { $0.ownerConnected }
    }

    var inboxHasRequests: Bool { cvu_flag_load_acquire(flags + Self.inboxFlag) }
    /// Set once, under the lock, when the context goes; read anywhere (under the lock, or not).
    var isCancelled: Bool { cvu_flag_load_acquire(flags + Self.cancelledFlag) }

    // MARK: Requests

    /// `setNeedsUpdate(animated: flag)` from any thread; `site` (where the request was made, for diagnostics)
    /// is made only on the slow path.
    @inline(__always)
    package func setNeedsUpdate(_ flag: Bool?, site: @autoclosure () -> RequestSite) {
        if isNoOpOnTheFastPath(flag) { return }
        submit(flag, update: false, site: site())
    }

    /// The fast path: on the main thread, outside `withUpdateTransaction`, an already-dirty context with
    /// nothing new takes no lock, allocates nothing and calls nothing. (An animated request changes a
    /// pending transaction's animation: not a no-op then.) Everything else is outlined, so that this path
    /// keeps a small frame.
    @inline(__always)
    private func isNoOpOnTheFastPath(_ flag: Bool?) -> Bool {
        if !cvu_transaction_scopes_active() && isOnSchedulerThread && !inboxHasRequests
            && machine.isNoOp(flag) && (flag != true || !hasPendingTransaction)
        {
            machine.absorbed &+= 1  // what the delivery absorbs (signposts, recording)
            return true
        }
        return false
    }

    /// `setNeedsUpdate(transaction:)` from any thread, unless it repeats what is pending (see
    /// ``isRepeatedPlainTransaction(_:)``). `transaction` has joined the current scope (the caller's).
    package func request(_ transaction: UpdateTransaction, site: RequestSite?) {
        if isRepeatedPlainTransaction(transaction) { return }
        submit(transaction, update: false, site: site)
    }

    /// The fast path: the same plain transaction again on a dirty context changes nothing (counted while
    /// recording, like a plain request; one made inside a delivery takes the slow path, which looks at it).
    /// Not inside a scope: the request joins the scope's completions there.
    @inline(__always)
    func isRepeatedPlainTransaction(_ transaction: UpdateTransaction) -> Bool {
        if isOnSchedulerThread, hasPendingTransaction, transaction.isPlain, !cvu_transaction_scopes_active(),
            !inboxHasRequests, machine.isNoOp(true),
            let animation = transaction.animation, machine.ledger?.repeatAnimation == animation
        {
            machine.absorbed &+= 1  // what the delivery absorbs (signposts, recording)
            return true
        }
        return false
    }

    /// Where every request without a transaction of its own enters (`setNeedsUpdate` off the fast path,
    /// `update()` when `update`, a refresh), from any thread: inside `withUpdateTransaction` on this thread it
    /// carries the scope's transaction, with `flag` applied. Off the main thread it waits in the inbox, applied
    /// in arrival order at the next turn.
    @inline(never)
    func submit(_ flag: Bool?, update: Bool, site: RequestSite?) {
        if let current = UpdateTransaction.current {
            return submit(current.applying(flag), update: update, site: site)
        }
        let request: UpdateRequest = update ? .update(flag) : .setNeedsUpdate(flag)
        guard isOnSchedulerThread else {
            post(request, note: RequestNote(site).carried())
            return
        }
        drainInboxIfNeeded()
        // Noted after the inbox: recording, as the deliveries that applying it made left it.
        apply(request, note: RequestNote(site))
    }

    /// Where a request carrying `transaction` enters (its animation is the flag; `update` for
    /// `update(transaction:)`), from any thread. The transaction is claimed
    /// (``UpdateTransaction/claimingCompletions()``): from here on, every path either keeps it pending, hands
    /// it to a delivery, or tells it why it was dropped.
    @inline(never)
    func submit(_ transaction: UpdateTransaction, update: Bool, site: RequestSite?) {
        let transaction = transaction.claimingCompletions()
        let request: UpdateRequest = update ? .update(transaction.isAnimated) : .setNeedsUpdate(transaction.isAnimated)
        guard isOnSchedulerThread else {
            if !post(request, carrying: transaction, note: RequestNote(site).carried()) {
                drop(transaction, .contextReleased)
            }
            return
        }
        drainInboxIfNeeded()
        apply(request, carrying: transaction, note: RequestNote(site))
    }

    /// A change that a request with `flag` will follow is about to land: on the scheduler's thread, when
    /// that request would animate (its flag, or with no flag the transaction of the current scope) and a
    /// non-animated update is pending, the rules' early flush is made now, so that it shows the state
    /// *before* the change and the animated delivery animates the change. Elsewhere it does nothing: from
    /// another thread the requests are applied in arrival order on the main thread (see the rules).
    package func flushBeforeChange(_ flag: Bool?) {
        // A request with no flag outside a scope never flushes.
        guard UpdateTransaction.effectiveFlag(of: flag) == true, isOnSchedulerThread, !isCancelled else { return }
        drainInboxIfNeeded()
        perform(machine.flushBeforeAnimatedChange())
    }
}

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
            guard !shared.ownerConnected else { return nil }
            shared.ownerConnected = true
            return shared.updaters.append(call)
        }
    }

    /// Removes updater `id`: its token's `remove()`, from any thread. A delivery that
    /// took the entry before (under the same lock) still calls it once; a later one never does.
    func removeRegistration(_ id: UInt64) {
        let removed = withShared { $0.updaters.remove(id: id) }
        _ = removed  // released outside the lock: an updater's captures may run deinit code
    }

    /// Whether updater `id` is still registered (any thread).
    func hasUpdater(_ id: UInt64) -> Bool {
        !isCancelled && withShared { $0.updaters.contains(id: id) }
    }

    /// Removes every updater (any thread), with `removeRegistration(_:)`'s rule.
    func removeAllUpdaters() {
        let removed = withShared { shared -> [UpdaterEntry] in
            shared.ownerConnected = false
            return shared.updaters.removeAll()
        }
        _ = removed  // released outside the lock
    }

    var updaterCount: Int {
        withShared { $0.updaters.count }
    }

    /// The link, if one was made (any thread): for questions that should not make one.
    package var linkIfMade: UpdateLink? {
        withShared { $0.link }
    }

    /// The link that outside callbacks hold (created on first use).
    package var link: UpdateLink {
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
            shared -> ([UpdaterEntry], [InboxEntry], UpdateTransaction?, UpdateLink?, CoalescingScheduler?) in
            cvu_flag_store_release(flags + Self.cancelledFlag, true)
            defer {
                shared.inbox.removeAll()
                shared.ledger?.pending = nil
                shared.link = nil
                shared.scheduler = nil
            }
            return (shared.updaters.removeAll(), shared.inbox, shared.ledger?.pending, shared.link, shared.scheduler)
        }
        dropTransactions(inbox: dropped.1, pending: dropped.2)
        dropped.3?.cut()
        // The scheduler (maybe a user's subclass) is released here, after the lock: it no longer holds
        // this storage alive through a cycle, and goes now if nothing else uses it.
    }

    /// The scheduler, retained, while the context lives (`nil` once it is gone): what a caller from
    /// outside the context (a lifecycle refresh, the link) holds while it calls in.
    func retainedScheduler() -> CoalescingScheduler? {
        withShared { $0.scheduler }
    }
}

// How a context carries out what its state machine answers (main thread), and how another thread hands it
// a request (the inbox).

extension UpdateStorage {
    // MARK: Performing actions (main thread)

    /// Where the machine's answers to requests, `update()`, `resume()`, `updateIfNeeded()` and the flushes are
    /// carried out (a turn's end-of-cycle delivery is the turn's own: `performTurn`).
    ///
    /// `note` is what diagnostics count of the request that made `action` (see ``RequestNote``): counted for
    /// the delivery that absorbs the request — after the rules' early flush began, when the request made it.
    func perform(_ action: UpdateStateMachine.Action, note: RequestNote? = nil) {
        // Gone (released inside an updater that ran before this action): its scheduler may be gone too.
        if isCancelled {
            machine.cancel()
            publishScheduled()
            return
        }
        publishScheduled()
        switch action {
        case .none:
            if let note { noteApplied(note) }
        case .askForTurn:
            if let note { noteApplied(note) }
            withScheduler { $0.scheduleOnOwnerThread(self) }
        case .deliverNow(let delivery, let askForTurn):
            if askForTurn { withScheduler { $0.scheduleOnOwnerThread(self) } }
            if delivery.isEarlyFlush { return deliver(delivery, thenNote: note) }
            if let note { noteApplied(note) }
            deliver(delivery)
        case .deferToInbox(let request):
            postFromDelivery(request, note: note)
        }
    }

    /// Applies one request on the main thread, however it was made (`setNeedsUpdate`, `update()`, a refresh,
    /// from the inbox), plain or carrying `transaction` (claimed, its flag in `request`): the machine answers,
    /// the storage keeps what the request carries beside the rules (``keep(_:for:)``) and carries the answer
    /// out. The payload is partitioned as the rules partition the requests: the rules' early flush shows what
    /// was pending before this request, so the payload is kept after it; any other delivery shows this
    /// request, so it is kept before.
    func apply(_ request: UpdateRequest, carrying transaction: UpdateTransaction? = nil, note: RequestNote?) {
        // (A context gone on another thread is learned by `keep` and `perform`, which check under the lock.)
        let action = machine.apply(request, defaultAnimated: animated)
        if case .deferToInbox = action, let transaction {
            // Updaters are running: a later cycle, with the transaction.
            if !postFromDelivery(request, carrying: transaction, note: note) { drop(transaction, .contextReleased) }
        } else if action.isEarlyFlush {
            // Kept after the flush (or dropped, when an updater of the flush released the context).
            perform(action, note: note)
            keep(transaction, for: request)
        } else if keep(transaction, for: request) {
            perform(action, note: note)
            if let transaction { noteRepeat(of: transaction, for: request) }
        } else {
            perform(.none)  // gone: the machine learns it
        }
    }

    /// A request made while updaters run: it waits in the inbox for a later cycle (counted there, when
    /// applied), and it is one more cycle towards the update-loop report. `false`: the context is gone.
    @discardableResult
    func postFromDelivery(_ request: UpdateRequest, carrying transaction: UpdateTransaction? = nil, note: RequestNote?)
        -> Bool
    {
        if let site = note?.site { noteRequestInDelivery(site) }
        return post(request, carrying: transaction, note: note)
    }

    /// Publishes the machine's state for other threads in the scheduled byte: bit 0, `isScheduled`; bit 1,
    /// the pending explicit flag is `false` (a non-animated request is pending; only with bit 0); bit 2,
    /// suspended (for descriptions).
    @inline(__always)
    func publishScheduled() {
        let pending = machine.pending
        var published: UInt8 = 0
        if pending.isScheduled { published = Published.scheduled | (pending.flag == false ? Published.nonAnimated : 0) }
        if machine.isSuspended { published |= Published.suspended }
        if cvu_byte_load_relaxed(flags + Self.scheduledFlag) != published {
            cvu_byte_store_release(flags + Self.scheduledFlag, published)
        }
    }

    /// Whether a non-animated request is pending — applied on the main thread, or waiting in the inbox —
    /// so that an animated change made now would be preceded by the rules' early non-animated flush. Any
    /// thread: a snapshot (the main thread may deliver right after).
    package var hasNonAnimatedRequestPending: Bool {
        if cvu_byte_load_relaxed(flags + Self.scheduledFlag) & Published.nonAnimated != 0 { return true }
        guard inboxHasRequests else { return false }
        return withShared { shared in shared.inbox.contains { $0.request == .setNeedsUpdate(false) } }
    }

    /// Applies the inbox first, so that a main-thread request comes after what other threads asked
    /// before it. Not while updaters run: what they ask waits there for a later cycle.
    @inline(__always)
    func drainInboxIfNeeded() {
        if inboxHasRequests && !machine.isDelivering { drainInbox() }
    }

    /// Applies what other threads (and re-entrant calls) put in the inbox, in arrival order.
    ///
    /// The inbox flag stays set until the requests are applied (and the machine's `isScheduled`
    /// published), so that `isUpdatePending`, asked from another thread meanwhile, never reads `false`
    /// for a request that is being applied.
    private func drainInbox() {
        do {
            let entries = withShared { shared -> [InboxEntry] in
                shared.inboxIsQueued = false
                defer { shared.inbox.removeAll() }
                return shared.inbox
            }
            for entry in entries { apply(entry.request, carrying: entry.transaction, note: entry.note) }
        }  // the entries go here: a transaction value that only they held runs its `deinit` before the check below
        publishScheduled()
        let needsTurn = withShared { shared -> Bool in
            // Requests posted meanwhile keep the flag, and registered the storage for a turn of their own —
            // unless a nested pass run by user code here took that listing (`.skip`): then it is listed again.
            if shared.inbox.isEmpty {
                cvu_flag_store_release(flags + Self.inboxFlag, false)
                return false
            }
            if shared.inboxIsQueued || isCancelled { return false }
            shared.inboxIsQueued = true
            return true
        }
        if needsTurn { withScheduler { $0.scheduleOnOwnerThread(self) } }
    }

    // MARK: Any thread

    /// Puts a request (with the transaction it carries) in the inbox, applied on the main thread at its next
    /// turn, in arrival order, and counted by diagnostics there (`note`). Returns `false` when the context is
    /// gone (the request is dropped; the caller tells the transaction).
    @discardableResult
    func post(_ request: UpdateRequest, carrying transaction: UpdateTransaction? = nil, note: RequestNote? = nil)
        -> Bool
    {
        var accepted = true
        let needsTurn = withShared { shared -> Bool in
            if isCancelled {
                accepted = false
                return false
            }
            UpdateStateMachine.enqueue(
                InboxEntry(request: request, transaction: transaction, note: note ?? RequestNote(nil)),
                into: &shared.inbox)
            cvu_flag_store_release(flags + Self.inboxFlag, true)
            if shared.inboxIsQueued { return false }
            shared.inboxIsQueued = true
            return true
        }
        // Reached only while the context lives or a caller holds the scheduler (see `unretainedScheduler`).
        if needsTurn { withScheduler { $0.schedule(self) } }
        return accepted
    }
}

// The main thread's API of a context (and its recoveries when called elsewhere), and the lifecycle and
// outside entry points.
extension UpdateStorage {
    /// `update(animated:)`, or `update(transaction:)` when `transaction` is given (inside a scope it joins the
    /// scope: the scope's completions wait for this update too). Off the main thread — a mistake — it reports
    /// (debug builds stop at the caller's line) and becomes a forced update, with what it carries, in the next
    /// main-thread cycle, as a lifecycle refresh posted there does.
    func update(_ flag: Bool?, transaction: UpdateTransaction? = nil, file: StaticString, line: UInt) {
        let (api, instead) = transaction == nil ? ("animated:", "") : ("transaction:", " with its transaction")
        _ = isOnSchedulerThreadOrReport(
            "update(\(api))",
            recovery: ": it delivers synchronously. Call setNeedsUpdate(\(api)) from other threads; this call "
                + "becomes an update\(instead) in the next main-thread cycle.", file: file, line: line)
        let site = RequestSite(file: file, line: line)
        if let transaction {
            submit(transaction.joiningCurrentScope(), update: true, site: site)
        } else {
            submit(flag, update: true, site: site)
        }
    }

    /// A lifecycle event: `update()` on the main thread, a deferred update anywhere else. Called by the
    /// refresh hub, which may reach a context being released on another thread: it holds the scheduler
    /// for the call, or does nothing once the context is gone.
    package func refresh() {
        guard let scheduler = retainedScheduler() else { return }
        // Inside `withUpdateTransaction` the refresh carries the scope's transaction, as `update()` there does.
        withExtendedLifetime(scheduler) { submit(nil, update: true, site: nil) }
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
        if !machine.isDelivering, let pass = withScheduler({ $0 as? any PassDrivenScheduler }) {
            pass.runRequestedPass()
        }
        drainInboxIfNeeded()
        perform(machine.updateIfNeeded(defaultAnimated: animated))
    }

    /// An animating scope begins on this context's thread (``AnimatedScopeFlush``): what is pending is delivered
    /// now (not while suspended, nor while this context's updaters run: what they asked waits for a later cycle).
    func flushBeforeAnimatedScope() {
        guard !isCancelled, isOnSchedulerThread, !machine.isDelivering else { return }
        drainInboxIfNeeded()
        perform(machine.updateIfNeeded(defaultAnimated: animated, isScopeFlush: true))
    }

    /// Runs `body` and answers whether it requested an update of this context (any request: `nil`,
    /// `false`, `true`, `update()`), even one that changed nothing because an update was already pending.
    /// Main thread, when `updateIfNeeded()` could not deliver what was pending (suspended, or inside an
    /// updater); what `body` requested stays requested, after what was pending before, as the rules
    /// apply it.
    func requestsMade(during body: () -> Void) -> Bool {
        requireMainThread("animateWithFlushedUpdates(using:_:)")
        // `body`'s requests are applied as they are made, after what is pending, as the rules apply any request
        // (while updaters run, they wait in the inbox for a later cycle); the machine watches them (see
        // ``UpdateStateMachine/watchRequests()``) so that none of them is a no-op.
        drainInboxIfNeeded()
        let watch = machine.watchRequests()
        body()
        let requested = machine.endWatchingRequests(watch)
        publishScheduled()
        return requested
    }

    /// Exact on the main thread; elsewhere a snapshot (another thread may change it right after).
    var isUpdatePending: Bool {
        if isOnSchedulerThread { return machine.pending.isScheduled || inboxHasRequests }
        return isUpdatePendingSnapshot
    }

    /// ``isUpdatePending`` as any thread can read it, from the published flags.
    var isUpdatePendingSnapshot: Bool {
        // The inbox first: the main thread publishes `scheduled` before it clears the inbox flag, so a
        // cleared inbox read here comes with the published `scheduled` (no instant reads both as false).
        inboxHasRequests || cvu_bits_load(flags + Self.scheduledFlag) & Published.scheduled != 0
    }

    var isSuspended: Bool {
        requireMainThread("isSuspended")
        return machine.isSuspended
    }

    func suspend(file: StaticString, line: UInt) {
        guard isOnSchedulerThreadOrReport("suspend()", recovery: "; ignored", file: file, line: line) else { return }
        machine.suspend()
        publishScheduled()  // suspended, for descriptions read elsewhere
    }

    /// `resume()`. Off the main thread, or with no `suspend()` to end — mistakes — it reports (debug
    /// builds stop at the caller's line) and is ignored.
    func resume(file: StaticString, line: UInt) {
        guard isOnSchedulerThreadOrReport("resume()", recovery: "; ignored", file: file, line: line) else { return }
        guard machine.isSuspended else {
            Misuse.recoverable(
                "ViewUpdatingContext.resume() called more times than suspend(); the extra call is ignored",
                label: label.string, file: file, line: line)
            return
        }
        drainInboxIfNeeded()
        let action = machine.resume(defaultAnimated: animated)
        publishScheduled()  // suspended, for descriptions read elsewhere
        perform(action)
    }

    /// Whether this context's updaters are running: main thread.
    package var isDelivering: Bool {
        machine.isDelivering
    }

    /// The number of the delivery under way (or of the last one): main thread, inside updaters.
    package var deliverySerial: UInt64 {
        machine.deliverySerial
    }

    /// Whether the delivery under way was forced (`update()`, a refresh): main thread, inside updaters.
    package var isForcedDelivery: Bool {
        isOnSchedulerThread && machine.delivering?.isForced == true
    }

    /// Whether the delivery under way is the rules' early non-animated flush: main thread, inside updaters.
    package var isEarlyFlushDelivery: Bool {
        isOnSchedulerThread && machine.delivering?.isEarlyFlush == true
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

/// The main-thread half of ``UpdateStorage`` that turns and deliveries take: the scheduler's turn, and
/// the call of each updater, claimed under the lock so that a removal from another thread is exact.
extension UpdateStorage {
    /// Calls every updater registered when the delivery began, in order, each with the same flag.
    ///
    /// Each entry is taken under the lock and called outside it, so an updater removed meanwhile (by
    /// an earlier updater, from another thread, or with the context) is never called. `isScopeFlush`: the
    /// delivery a scope's entry makes of what was pending (recording names it so).
    ///
    /// `note`: the request that made this delivery the rules' early flush, which the next delivery absorbs —
    /// counted once this one has taken what it absorbed.
    func deliver(_ delivery: Delivery, thenNote note: RequestNote? = nil) {
        if isCancelled {
            machine.cancel()
            return
        }
        machine.deliveryBegan(delivery)
        let transaction = beginTransaction(of: delivery)
        let probe = DeliveryProbe(self)  // what diagnostics watch of it
        if let note { noteApplied(note) }
        // Each updater is taken under the lock: that is where its call begins. A removal from another thread
        // takes the lock too, so it either comes first (the updater is not called) or after (the call taken is
        // under way, and finishes). Each is released as its call returns, before any other code runs (the
        // probe's report is the user's handler): an updater that removed itself lets go of what it captured (a
        // tracked one, its tracking) at once, as removal promises.
        // The first is taken with the newest one this delivery calls (the limit).
        var id: UInt64 = 0
        var limit: UInt64 = 1
        while id < limit,
            let next = withShared({ shared -> UpdaterEntry? in
                if id == 0 { limit = shared.updaters.newestID }
                return shared.updaters.next(after: id, upTo: limit)
            })
        {
            id = next.id
            next.call(delivery.animated)
            _ = consume next
        }
        probe.end(self, delivery, transaction: transaction)
        // The completions run after the updaters (inside the delivery: what they request waits for a later
        // cycle), or once the animations the updaters started end.
        if let transaction { endTransaction(transaction, hadUpdaters: id != 0) }
        // What updaters asked for waits in the inbox for a later cycle. A nested run loop inside an updater
        // may have run a turn that passed this storage by: register again, or what is pending would wait for
        // an unrelated turn. Not when the context went inside an updater: the scheduler may have gone with it.
        noteDeliveryEnded()
        if machine.deliveryEnded(inboxHasRequests: self.inboxHasRequests) && !isCancelled {
            withScheduler { $0.scheduleOnOwnerThread(self) }
        }
    }

    /// Whether a turn would still find something to deliver (``ManualScheduler/isIdle``): an update pending
    /// and not suspended (a suspended one waits for `resume()`, not a turn), or requests in the inbox. Main
    /// thread.
    package var hasWorkForTurn: Bool {
        let machine = self.machine
        return !isCancelled && (machine.pending.isScheduled && !machine.isSuspended || inboxHasRequests)
    }

    /// View updates wait for a pass in a common mode, as Core Animation's commit does.
    private static let updateModes: [RunLoop.Mode] = [.common]

    package func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]? {
        if isCancelled {
            machine.cancel()
            return nil
        }
        // A pass in a private mode (code waiting synchronously in a mode of its own): nothing is applied or
        // delivered; the storage stays registered, parked until a common pass. Listed twice in this turn
        // (both of its lists), it parks once.
        // (`isCommonMode` is exactly what `admits([.common])` asks, without comparing mode names per context.)
        if !turn.isCommonMode {
            return machine.park(serial: turn.serial) ? Self.updateModes : nil
        }
        switch machine.turnBegan(serial: turn.serial) {
        case .skip, .missed:
            // The listing taken may have been the inbox's: let the next request from another thread register
            // again. What is pending is registered again by the drain under way (`.skip` inside a turn that
            // applies the inbox) or by the end of the delivery (`.missed`: the machine forgot its own-thread
            // registration).
            withShared { $0.inboxIsQueued = false }
            return nil
        case .run:
            break
        }
        drainInboxIfNeeded()
        let delivery = machine.turnEnded(defaultAnimated: animated)
        // Published after the updaters ran: other threads read the update as pending until it is delivered.
        if let delivery { deliver(delivery) }
        publishScheduled()
        return nil
    }
}
