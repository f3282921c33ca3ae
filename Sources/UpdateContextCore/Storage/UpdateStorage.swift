import CCoalescingSupport
import CoalescingRuntime
import Foundation

/// The storage of a ``ViewUpdatingContext``: what a context is, in one place — its state machine (the rules, the
/// phases, the listing with its scheduler, what the requests' transactions carry), the inbox of other threads'
/// requests, the updaters, and the faces the layers keep on it. The scheduler holds this, never the context, so
/// releasing the context frees it at once.
///
/// Two worlds meet here. The state machine (``UpdateStateMachine``, below) is confined to the main thread (the
/// scheduler's thread) and read without a lock, which keeps a request on an already-dirty context at a few
/// nanoseconds. What other threads touch — the inbox, the updaters, the faces — is in `shared`, behind a lock,
/// with one-byte atomic flags (`flags`) so that the main thread takes the lock only when there is something to
/// take. Updaters, completions and every other piece of user code run only outside that lock, after the machine
/// has answered.
///
/// The path of a request: ``setNeedsUpdate(_:owner:site:)`` (or, for a change, ``willChange(_:)`` then
/// ``didChange(_:in:owner:site:)``), which reads the scope once, unless the request is a no-op on the fast path →
/// ``submit(_:scoped:update:owner:site:)``, which decides the thread → (main thread) ``apply(_:carrying:note:)`` → the machine's `request` → `.list` →
/// `scheduleOnOwnerThread` → at the end of the cycle the scheduler calls ``performTurn(_:)`` → the machine's `turn`,
/// the inbox applied, `endOfTurn` → ``deliver(_:thenNote:)`` → each updater → the machine's `deliveryEnded`.
/// From another thread: ``post(_:carrying:note:owner:)`` puts the request in the inbox and lists the storage for the
/// next turn (one wake-up), where it is applied and delivered in that same turn.
package final class UpdateStorage: TurnClient, @unchecked Sendable {
    // @unchecked Sendable: `machine` is read and written only on the scheduler's thread — every entry point
    // checks `isOnSchedulerThread` first, or is `performTurn`, which the scheduler calls there — and never across a
    // call out to user code (updaters run after the event returned); `deinit` is the one other reader, when
    // nobody else holds the storage. `shared` is read and written only under this object's striped lock
    // (`withShared`). The flag bytes only with the atomic functions of CCoalescingSupport. The rest is immutable.
    //
    // Both confined properties are `@exclusivity(unchecked)`: the confinement and the lock make the dynamic
    // exclusivity checks of a class property (a thread-local lookup on every access, on the request path)
    // unnecessary. The lock is striped (`StripedLocks`): a `pthread_mutex_t` alone is 40 bytes on Linux, and
    // every critical section here is a few instructions that never call out.

    /// What other threads touch, under the storage's lock.
    struct Shared {
        var inbox: [InboxEntry] = []
        var updaters = UpdaterList()
        /// The merged transaction of the pending requests (at most one: an array, so that a context that never
        /// sees one pays a word for it): where a release on any thread finds it, to tell it it was dropped.
        var pendingTransaction: [UpdateTransaction] = []
        /// The layers' faces, one per type (their subscriptions, the properties pass's binding, the delivery
        /// feed), kept while the context lives: `cancel()` lets them go (a face's `deinit` ends what it runs).
        var faces: [ObjectIdentifier: any AnyObject & Sendable] = [:]
        /// Keeps the scheduler alive until the context goes (`cancel()` lets it go): the scheduler holds
        /// the storage while an update is pending, so holding it after that would make a cycle that keeps
        /// both — and a background thread's run loop — alive after a context released with work pending.
        var scheduler: CoalescingScheduler?
        /// Whether a `ViewUpdating` object connected its `updateView(animated:)` (`startUpdatingView()`, until
        /// `removeUpdaters()`).
        var ownerConnected = false
        /// Whether the context joined a refresh hub (set once, before the context is shared).
        var refreshes = false
        /// Whether the inbox has listed the storage for a turn that has not drained it yet.
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
        static let scheduled: UInt8 = 1  // something is due
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
        // A given label's entry goes with the last holder of the storage (the scheduler, a layer's subscription
        // may outlive the context): until then reports and descriptions still name it.
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

    var inboxHasRequests: Bool { cvu_flag_load_acquire(flags + Self.inboxFlag) }
    /// Set once, under the lock, when the context goes; read anywhere (under the lock, or not).
    package var isCancelled: Bool { cvu_flag_load_acquire(flags + Self.cancelledFlag) }

    // MARK: Requests: the one way in

    /// `setNeedsUpdate(animated: flag)` from any thread; `site` (where the request was made, for diagnostics)
    /// is made only on the slow path.
    @inline(__always)
    package func setNeedsUpdate(_ flag: Bool?, owner: AnyObject? = nil, site: @autoclosure () -> RequestSite) {
        // The scope count, read once: no scope alive, the fast path; one alive, the scope's transaction.
        let scopes = cvu_transaction_scopes_active()
        if !scopes && isNoOpOnThisThread(flag) { return }
        submit(flag, scoped: scopes ? UpdateTransaction.scoped?.applying(flag) : nil, owner: owner, site: site)
    }

    /// A change that a request with `flag` will follow is about to land (`@NeedsUpdate`,
    /// `setNeedsUpdate(animated:_:)`): the first half of a change made in the order that keeps the rules true.
    /// On the scheduler's thread, when the request animates (its flag, or with none the current scope's
    /// transaction) and a non-animated update is pending, the rules' early flush is made now — it shows the state
    /// *before* the change. The scope is read here, once, for ``didChange(_:in:owner:site:)``, which makes the request
    /// once the change has landed (so that from any thread the delivery it makes sees the change).
    @inline(__always)
    package func willChange(_ flag: Bool?) -> ChangeScope {
        // No scope alive and no animated flag: nothing flushes, and the request may take the fast path.
        if !cvu_transaction_scopes_active() && flag != true { return ChangeScope(isAlive: false, scoped: nil) }
        return willChangeSlowly(flag)
    }

    @inline(never)
    private func willChangeSlowly(_ flag: Bool?) -> ChangeScope {
        let scoped = UpdateTransaction.current?.applying(flag)
        if scoped?.isAnimated ?? (flag == true) { flushBeforeAnimatedChange() }
        return ChangeScope(isAlive: true, scoped: scoped)
    }

    /// The second half (see ``willChange(_:)``): the request, once the change has landed.
    @inline(__always)
    package func didChange(
        _ flag: Bool?, in scope: ChangeScope, owner: AnyObject? = nil, site: @autoclosure () -> RequestSite
    ) {
        // No scope was alive when the change began: none is now for this task (a scope is a closure's, and the
        // store opens none), so the scope is not read again.
        if !scope.isAlive && isNoOpOnThisThread(flag) { return }
        submit(flag, scoped: scope.scoped, owner: owner, site: site)
    }

    /// What ``willChange(_:)`` learned of the scope: whether one may be alive, and if so its transaction with the
    /// request's flag applied (read once).
    package struct ChangeScope {
        fileprivate let isAlive: Bool
        fileprivate let scoped: UpdateTransaction?
    }

    /// The fast path, once no scope is alive: on the main thread an already-dirty context with nothing new takes
    /// no lock, allocates nothing and calls nothing. (An animated request changes a pending transaction's
    /// animation: not a no-op then.) Everything else is outlined, so that this path keeps a small frame.
    @inline(__always)
    private func isNoOpOnThisThread(_ flag: Bool?) -> Bool {
        if isOnSchedulerThread && !inboxHasRequests && machine.isNoOp(flag) && (flag != true || !hasPendingTransaction)
        {
            machine.diagnostics.absorbed &+= 1  // what the delivery absorbs (signposts, recording)
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
            let animation = transaction.animation, machine.carried[0].repeatAnimation == animation
        {
            machine.diagnostics.absorbed &+= 1  // what the delivery absorbs (signposts, recording)
            return true
        }
        return false
    }

    /// Where every request without a transaction of its own enters (`setNeedsUpdate` off the fast path,
    /// `update()` when `update`, a refresh), from any thread. `scoped`: the transaction of the scope the request
    /// was made in, with `flag` applied (the caller read the scope once): then the request carries it. Off the main
    /// thread the request waits in the inbox, applied in arrival order at the next turn.
    /// `site` is asked only where diagnostics need it. `owner`: the `ViewUpdating` object whose request it is
    /// (seen once, for the report of an owner that never connects).
    @inline(never)
    func submit(
        _ flag: Bool?, scoped: UpdateTransaction?, update: Bool = false, owner: AnyObject? = nil,
        site: () -> RequestSite?
    ) {
        if let owner, isOnSchedulerThread, machine.diagnostics.bits.isDisjoint(with: [.ownerSeen, .ownerConnected]) {
            noteOwner(owner)
        }
        if let scoped { return submit(scoped, update: update, site: site(), owner: owner) }
        let request: UpdateRequest = update ? .update(flag) : .setNeedsUpdate(flag)
        guard isOnSchedulerThread else {
            post(request, note: RequestNote(site, needed: false).carried(), owner: owner)
            return
        }
        drainInboxIfNeeded()
        // Noted after the inbox: recording, as the deliveries that applying it made left it. A request made inside
        // the context's own delivery needs its site for the update-loop report.
        apply(request, note: RequestNote(site, needed: machine.isDelivering))
    }

    /// Where a request carrying `transaction` enters (its animation is the flag; `update` for
    /// `update(transaction:)`), from any thread. The transaction is claimed
    /// (``UpdateTransaction/claimingCompletions()``): from here on, every path either keeps it pending, hands
    /// it to a delivery, or tells it why it was dropped.
    @inline(never)
    func submit(_ transaction: UpdateTransaction, update: Bool, site: RequestSite?, owner: AnyObject? = nil) {
        let transaction = transaction.claimingCompletions()
        let request: UpdateRequest = update ? .update(transaction.isAnimated) : .setNeedsUpdate(transaction.isAnimated)
        guard isOnSchedulerThread else {
            if !post(request, carrying: transaction, note: RequestNote(site).carried(), owner: owner) {
                transaction.tellDropped(.contextReleased)
            }
            return
        }
        drainInboxIfNeeded()
        apply(request, carrying: transaction, note: RequestNote(site))
    }

    /// A change that a request with `flag` will follow is about to land (the layers' property wrappers, which
    /// store between the two): see ``willChange(_:)``. From another thread it does nothing:
    /// the requests are applied in arrival order on the main thread (see the rules).
    package func flushBeforeChange(_ flag: Bool?) {
        // A request with no flag outside a scope never flushes.
        if UpdateTransaction.effectiveFlag(of: flag) == true { flushBeforeAnimatedChange() }
    }

    /// An animated request follows: on the scheduler's thread, with a non-animated update pending, the rules'
    /// early flush is made now.
    private func flushBeforeAnimatedChange() {
        guard isOnSchedulerThread, !isCancelled else { return }
        drainInboxIfNeeded()
        perform(machine.flushBeforeAnimatedChange())
    }

    // MARK: Applying (main thread)

    /// Applies one request on the main thread, however it was made (`setNeedsUpdate`, `update()`, a refresh,
    /// from the inbox), plain or carrying `transaction` (claimed, its flag in `request`): the machine answers,
    /// the storage keeps what the request carries beside the rules (``keep(_:for:)``) and carries the answer
    /// out. The payload is partitioned as the rules partition the requests: the rules' early flush shows what
    /// was pending before this request, so the payload is kept after it; any other delivery shows this
    /// request, so it is kept before.
    func apply(_ request: UpdateRequest, carrying transaction: UpdateTransaction? = nil, note: RequestNote?) {
        let action = machine.request(request, defaultAnimated: animated)
        if machine.isSuspended { noteRequestWhileSuspended() }
        switch action {
        case .defer:
            // Updaters are running: a later cycle, with the transaction (counted there, when applied). One more
            // cycle towards the update-loop report.
            if let site = note?.site { noteRequestInDelivery(site) }
            if !post(request, carrying: transaction, note: note) { transaction?.tellDropped(.contextReleased) }
        case .deliver(let delivery, _) where delivery.isEarlyFlush:
            // Kept after the flush (or dropped, when an updater of the flush released the context).
            perform(action, note: note)
            keep(transaction, for: request)
        default:
            if keep(transaction, for: request) {
                perform(action, note: note)
                if let transaction { noteRepeat(of: transaction, for: request) }
            } else {
                perform(.none)  // gone: the machine learns it
            }
        }
    }

    /// Carries out what the machine answered to a request, `update()`, `resume()`, `updateIfNeeded()` or a flush
    /// (a turn's end of cycle is the turn's own: `performTurn`).
    ///
    /// `note` is what diagnostics count of the request that made `action` (see ``RequestNote``): counted for
    /// the delivery that absorbs the request — after the rules' early flush began, when the request made it.
    func perform(_ action: UpdateStateMachine.Action, note: RequestNote? = nil) {
        // Gone (released inside an updater that ran before this action): its scheduler may be gone too.
        if isCancelled { return cancelMachine() }
        publishScheduled()
        switch action {
        case .none, .defer:
            noteApplied(note)
        case .list:
            noteApplied(note)
            list()
        case .deliver(let delivery, let list):
            if list { self.list() }
            if delivery.isEarlyFlush { return deliver(delivery, thenNote: note) }
            noteApplied(note)
            deliver(delivery)
        }
    }

    /// Lists the storage with its scheduler for the end of this cycle (on its thread).
    @inline(__always)
    private func list() {
        withScheduler { $0.scheduleOnOwnerThread(self) }
    }

    /// The machine learns that the context is gone (`cancel()` told what it carried). Main thread.
    private func cancelMachine() {
        machine.cancel()
        publishScheduled()
    }

    /// Publishes the machine's state for other threads in the scheduled byte: bit 0, something is due; bit 1,
    /// the pending explicit flag is `false` (a non-animated request is pending; only with bit 0); bit 2,
    /// suspended (for descriptions).
    @inline(__always)
    func publishScheduled() {
        var published: UInt8 = 0
        if let due = machine.due { published = Published.scheduled | (due.flag == false ? Published.nonAnimated : 0) }
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

    // MARK: The inbox

    /// Puts a request (with the transaction it carries) in the inbox, applied on the main thread at its next
    /// turn, in arrival order, and counted by diagnostics there (`note`). `owner`: the `ViewUpdating` object
    /// whose request it is, kept weakly until the turn sees it (while no owner is connected). Returns `false`
    /// when the context is gone (the request is dropped; the caller tells the transaction).
    @discardableResult
    func post(
        _ request: UpdateRequest, carrying transaction: UpdateTransaction? = nil, note: RequestNote? = nil,
        owner: AnyObject? = nil
    ) -> Bool {
        var accepted = true
        let needsTurn = withShared { shared -> Bool in
            if isCancelled {
                accepted = false
                return false
            }
            var entry = InboxEntry(request: request, transaction: transaction, note: note ?? RequestNote(nil))
            if !shared.ownerConnected { entry.owner = owner }
            UpdateStateMachine.enqueue(entry, into: &shared.inbox)
            cvu_flag_store_release(flags + Self.inboxFlag, true)
            if shared.inboxIsQueued { return false }
            shared.inboxIsQueued = true
            return true
        }
        // Reached only while the context lives or a caller holds the scheduler (see `unretainedScheduler`). Another
        // thread's request on a context that waits already looks whether the turn it waits for is late.
        if needsTurn {
            withScheduler { $0.schedule(self) }
        } else if accepted && !isOnSchedulerThread {
            withScheduler { $0.noticeLateTurn() }
        }
        return accepted
    }

    /// Applies the inbox first, so that a main-thread request comes after what other threads asked
    /// before it. Not while updaters run: what they ask waits there for a later cycle.
    @inline(__always)
    func drainInboxIfNeeded() {
        if inboxHasRequests && !machine.isDelivering { drainInbox() }
    }

    /// Applies what other threads (and re-entrant calls) put in the inbox, in arrival order.
    ///
    /// The inbox flag stays set until the requests are applied (and the machine's state published), so that
    /// `isUpdatePending`, asked from another thread meanwhile, never reads `false` for a request that is being
    /// applied.
    private func drainInbox() {
        do {
            let entries = withShared { shared -> [InboxEntry] in
                shared.inboxIsQueued = false
                defer { shared.inbox.removeAll() }
                return shared.inbox
            }
            for entry in entries {
                // An owner whose requests all come from other threads is seen here.
                if machine.diagnostics.bits.isDisjoint(with: [.ownerSeen, .ownerConnected]), let owner = entry.owner {
                    noteOwner(owner)
                }
                apply(entry.request, carrying: entry.transaction, note: entry.note)
            }
        }  // the entries go here: a transaction value that only they held runs its `deinit` before the check below
        publishScheduled()
        let needsTurn = withShared { shared -> Bool in
            // Requests posted meanwhile keep the flag, and listed the storage for a turn of their own — unless a
            // nested pass run by user code here took that listing (`.skip`): then it is listed again.
            if shared.inbox.isEmpty {
                cvu_flag_store_release(flags + Self.inboxFlag, false)
                return false
            }
            if shared.inboxIsQueued || isCancelled { return false }
            shared.inboxIsQueued = true
            return true
        }
        if needsTurn { list() }
    }

    // MARK: Turns and deliveries (main thread)

    /// View updates wait for a pass in a common mode, as Core Animation's commit does.
    private static let updateModes: [RunLoop.Mode] = [.common]

    package func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]? {
        if isCancelled {
            cancelMachine()
            return nil
        }
        // A pass in a private mode (code waiting synchronously in a mode of its own): nothing is applied or
        // delivered; the storage stays listed, parked until a common pass. Listed twice in this turn (both of
        // its lists), it parks once. (`isCommonMode` is exactly what `admits([.common])` asks.)
        if !turn.isCommonMode {
            return machine.park(serial: turn.serial) ? Self.updateModes : nil
        }
        guard case .run = machine.turn(serial: turn.serial) else {
            // The listing taken may have been the inbox's: let the next request from another thread list the
            // storage again. What is pending is listed again by the drain under way (`.skip` inside a turn that
            // applies the inbox) or by the end of the delivery (`.missed`).
            withShared { $0.inboxIsQueued = false }
            return nil
        }
        drainInboxIfNeeded()
        // Published after the updaters ran: other threads read the update as pending until it is delivered.
        if let delivery = machine.endOfTurn(defaultAnimated: animated) { deliver(delivery) }
        publishScheduled()
        return nil
    }

    /// Whether a turn would still find something to deliver (``ManualScheduler/isIdle``): an update due and
    /// not suspended (a suspended one waits for `resume()`, not a turn), or requests in the inbox. Main thread.
    package var hasWorkForTurn: Bool {
        !isCancelled && (machine.due != nil && !machine.isSuspended || inboxHasRequests)
    }

    /// Calls every updater registered when the delivery began, in order, each with the same flag. The machine
    /// has begun `delivery` (its phase is `delivering`).
    ///
    /// Each updater is taken under the lock and called outside it, so an updater removed meanwhile (by
    /// an earlier updater, from another thread, or with the context) is never called.
    ///
    /// `note`: the request that made this delivery the rules' early flush, which the next delivery absorbs —
    /// counted once this one has taken what it absorbed.
    func deliver(_ delivery: Delivery, thenNote note: RequestNote? = nil) {
        if isCancelled { return cancelMachine() }
        let transaction = beginTransaction(of: delivery)
        // What diagnostics watch of it, only when something does: otherwise what it absorbed is forgotten.
        let recorder = isWatched ? DeliveryRecorder(self) : nil
        if recorder == nil { machine.forgetDiagnostics() }
        noteApplied(note)
        // Each updater is taken under the lock: that is where its call begins. A removal from another thread
        // takes the lock too, so it either comes first (the updater is not called) or after (the call taken is
        // under way, and finishes). Each is released as its call returns, before any other code runs: an updater
        // that removed itself lets go of what it captured (a tracked one, its tracking) at once, as removal
        // promises. The first is taken with the newest one this delivery calls (the limit).
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
        recorder?.end(self, delivery, transaction: transaction)
        if id == 0 { noteDeliveredToNobody() }
        // The completions run after the updaters (inside the delivery: what they request waits for a later
        // cycle), or once the animations the updaters started end.
        if let transaction { endTransaction(transaction, hadUpdaters: id != 0) }
        // What updaters asked for waits in the inbox for a later cycle. A nested run loop inside an updater may
        // have run a turn that passed this storage by: list it again, or what is pending would wait for an
        // unrelated turn. Not when the context went inside an updater: the scheduler may have gone with it.
        if machine.deliveryEnded(inboxHasRequests: self.inboxHasRequests) && !isCancelled { list() }
    }

    /// Whether diagnostics watch the delivery beginning now: while recording, while a tool records signposts, or
    /// when it is timed on its own (made outside every turn: a slow one names its context).
    @inline(__always)
    private var isWatched: Bool {
        cvu_diagnostics_is_recording() || Signposts.areRecorded || withScheduler { $0.timesDeliveryAlone }
    }

    /// A request applied on the main thread, as diagnostics count it for the delivery that absorbs it: its count,
    /// and while recording its site, when no earlier request of that delivery's was noted.
    @inline(__always)
    func noteApplied(_ note: RequestNote?) {
        guard let note else { return }
        machine.diagnostics.absorbed &+= note.count
        if note.isRecorded, let site = note.site { noteFirstRequest(site) }
    }

    // MARK: What requests carry: transactions (main thread)

    /// Whether a transaction is pending.
    var hasPendingTransaction: Bool { machine.hasPendingTransaction }

    /// What a request keeps beside the rules: its `transaction`, merged into the pending one (after it); an
    /// animated request without a transaction makes the pending transaction's animation the default one (the
    /// last animated request's). `false` when the context is gone (the transaction was told so).
    @discardableResult
    func keep(_ transaction: UpdateTransaction?, for request: UpdateRequest) -> Bool {
        guard let transaction else {
            if request.isAnimated && hasPendingTransaction {
                machine.carried[0].repeatAnimation = nil
                withShared { shared in
                    if !shared.pendingTransaction.isEmpty { shared.pendingTransaction[0].animation = nil }
                }
            }
            return true
        }
        if machine.carried.isEmpty { machine.carried = [UpdateStateMachine.Carried()] }
        machine.carried[0].repeatAnimation = nil  // what is pending changes: the caller says if it is a repeat
        // The check and the merge are one step under the lock that `cancel()` marks the context gone and takes
        // the pending transaction under: a transaction is either told by `cancel()` or here, never lost.
        let displaced = withShared { shared -> UpdateTransaction.Displaced? in
            if isCancelled { return nil }
            if shared.pendingTransaction.isEmpty {
                shared.pendingTransaction = [transaction]
                return UpdateTransaction.Displaced()
            }
            return shared.pendingTransaction[0].absorb(transaction)
        }
        guard let displaced else {
            transaction.tellDropped(.contextReleased)
            return false
        }
        // Outside the lock: an extra hold given back, and replaced values released (user deinits).
        displaced.release()
        machine.hasPendingTransaction = true
        return true
    }

    /// After a request with `transaction` was carried out: the fast path's key says what the pending
    /// transaction's animation is, when a repeat of it would change nothing, or nothing.
    func noteRepeat(of transaction: UpdateTransaction, for request: UpdateRequest) {
        guard !machine.carried.isEmpty else { return }  // gone meanwhile
        let repeats = !request.isUpdate && transaction.isPlain && hasPendingTransaction && machine.isNoOp(true)
        machine.carried[0].repeatAnimation = repeats ? transaction.animation : nil
    }

    /// The start of a delivery: the transaction it absorbs (everything pending), made the one its updaters
    /// see, with its animation as the delivery's flag says. `nil` when no transaction is pending.
    @inline(__always)
    func beginTransaction(of delivery: Delivery) -> CompletionGroup? {
        hasPendingTransaction ? beginPendingTransaction(of: delivery) : nil
    }

    private func beginPendingTransaction(of delivery: Delivery) -> CompletionGroup? {
        machine.carried[0].repeatAnimation = nil
        machine.hasPendingTransaction = false
        guard var transaction = withShared({ $0.pendingTransaction.popLast() }) else { return nil }
        transaction.animation = delivery.animated ? (transaction.animation ?? .default) : nil
        let group = CompletionGroup(transaction.completions)
        var seen = transaction.withoutCompletions
        seen.group = group
        machine.carried[0].delivering = seen
        return group
    }

    /// The end of a delivery's updaters: its completions run now, or once the animations that updaters
    /// started through the transaction end; with no updater to show it, the request was dropped.
    func endTransaction(_ group: CompletionGroup, hadUpdaters: Bool) {
        if !machine.carried.isEmpty { machine.carried[0].delivering = nil }
        if hadUpdaters {
            group.leave()
        } else {
            // No updater showed it: none was registered, or the context went (and took them) first.
            group.complete(.dropped(isCancelled ? .contextReleased : .noUpdaters))
        }
    }

    /// The transaction of the delivery under way, as its updaters get it: the merged transaction of the
    /// requests it absorbed, or one with the default animation (or none) when they carried none. Main
    /// thread, inside updaters.
    package func deliveryTransaction(animated: Bool) -> UpdateTransaction {
        machine.carried.first?.delivering ?? UpdateTransaction(animation: animated ? .default : nil)
    }

    /// The transaction of the delivery under way (``deliveryTransaction(animated:)``), if updaters are running:
    /// `nil` elsewhere, and on another thread.
    var transactionUnderWay: UpdateTransaction? {
        guard isOnSchedulerThread, let delivery = machine.delivering else { return nil }
        return deliveryTransaction(animated: delivery.animated)
    }
}

// The main thread's API of a context (and its recoveries when called elsewhere), and the outside entry points.
extension UpdateStorage {
    /// `update(animated:)`, or `update(transaction:)` when `transaction` is given (inside a scope it joins the
    /// scope: the scope's completions wait for this update too). Off the main thread — a mistake — it reports
    /// (debug builds stop at the caller's line) and becomes a forced update, with what it carries, in the next
    /// main-thread cycle, as a lifecycle refresh posted there does.
    package func update(_ flag: Bool?, transaction: UpdateTransaction? = nil, file: StaticString, line: UInt) {
        let (api, instead) = transaction == nil ? ("animated:", "") : ("transaction:", " with its transaction")
        _ = isOnSchedulerThreadOrReport(
            "update(\(api))",
            recovery: ": it delivers synchronously. Call setNeedsUpdate(\(api)) from other threads; this call "
                + "becomes an update\(instead) in the next main-thread cycle.", file: file, line: line)
        let site = RequestSite(file: file, line: line)
        if let transaction {
            submit(transaction.joiningCurrentScope(), update: true, site: site)
        } else {
            submit(flag, scoped: UpdateTransaction.current?.applying(flag), update: true, site: { site })
        }
    }

    /// A lifecycle event: `update()` on the main thread, a deferred update anywhere else. Called by the
    /// refresh hub, which may reach a context being released on another thread: it holds the scheduler
    /// for the call, or does nothing once the context is gone.
    package func refresh() {
        guard let scheduler = retainedScheduler() else { return }
        // Inside `withUpdateTransaction` the refresh carries the scope's transaction, as `update()` there does.
        withExtendedLifetime(scheduler) { submit(nil, scoped: UpdateTransaction.current, update: true, site: { nil }) }
    }

    /// `setNeedsUpdate(animated:)` from outside the context (Observation's `onChange`, the layers'
    /// subscriptions), which may run while the context is being released on another thread: it holds the
    /// scheduler for the call, or does nothing once the context is gone.
    package func setNeedsUpdateFromOutside(_ flag: Bool?, site: RequestSite) {
        guard let scheduler = retainedScheduler() else { return }
        withExtendedLifetime(scheduler) { setNeedsUpdate(flag, site: site) }
    }

    /// `setNeedsUpdate(transaction:)` from outside the context (the layers' subscriptions), as
    /// ``setNeedsUpdateFromOutside(_:site:)``: once the context is gone the transaction's completions are told it
    /// was dropped. Inside a scope the request joins it. Any thread.
    package func requestFromOutside(_ transaction: UpdateTransaction, site: RequestSite) {
        let transaction = transaction.joiningCurrentScope()
        guard let scheduler = retainedScheduler() else {
            return transaction.tellUnrequestedDropped(.contextReleased)
        }
        withExtendedLifetime(scheduler) { request(transaction, site: site) }
    }

    package func updateIfNeeded(file: StaticString, line: UInt) {
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
        perform(machine.deliverDue(defaultAnimated: animated))
    }

    /// An animating scope begins on this context's thread (``AnimatedScopeFlush``): what is pending is delivered
    /// now (not while suspended, nor while this context's updaters run: what they asked waits for a later cycle).
    /// `applyingInbox`: the flush's first round applies what other threads asked before; a later round (a context
    /// an earlier round's delivery made pending) leaves what arrived since for the turn.
    func flushBeforeAnimatedScope(applyingInbox: Bool) {
        guard !isCancelled, isOnSchedulerThread, !machine.isDelivering else { return }
        if applyingInbox { drainInboxIfNeeded() }
        perform(machine.deliverDue(defaultAnimated: animated, isScopeFlush: true))
    }

    /// Runs `body` and answers whether it requested an update of this context (any request: `nil`, `false`,
    /// `true`, `update()`), even one that changed nothing because an update was already pending: every request
    /// counts itself for the delivery that absorbs it — applied at once, or in the inbox while updaters run — and
    /// a delivery begins with a new number. Main thread.
    package func requestsMade(during body: () -> Void) -> Bool {
        requireMainThread("animateWithFlushedUpdates(using:_:)")
        drainInboxIfNeeded()
        let before = (machine.diagnostics.absorbed, machine.deliverySerial, inboxCount)
        body()
        publishScheduled()
        return (machine.diagnostics.absorbed, machine.deliverySerial, inboxCount) != before
    }

    /// How many requests wait in the inbox (its entries count those they merged).
    private var inboxCount: UInt32 {
        withShared { $0.inbox.reduce(0) { $0 &+ $1.note.count } }
    }

    /// Exact on the main thread; elsewhere a snapshot (another thread may change it right after).
    package var isUpdatePending: Bool {
        if isOnSchedulerThread { return machine.due != nil || inboxHasRequests }
        return isUpdatePendingSnapshot
    }

    /// ``isUpdatePending`` as any thread can read it, from the published flags.
    var isUpdatePendingSnapshot: Bool {
        // The inbox first: the main thread publishes `scheduled` before it clears the inbox flag, so a
        // cleared inbox read here comes with the published `scheduled` (no instant reads both as false).
        inboxHasRequests || cvu_bits_load(flags + Self.scheduledFlag) & Published.scheduled != 0
    }

    package var isSuspended: Bool {
        requireMainThread("isSuspended")
        return machine.isSuspended
    }

    package func suspend(file: StaticString, line: UInt) {
        guard isOnSchedulerThreadOrReport("suspend()", recovery: "; ignored", file: file, line: line) else { return }
        machine.suspend(at: UInt32(truncatingIfNeeded: withScheduler { $0.now() } / 1_000_000))
        publishScheduled()  // suspended, for descriptions read elsewhere
    }

    /// `resume()`. Off the main thread, or with no `suspend()` to end — mistakes — it reports (debug
    /// builds stop at the caller's line) and is ignored.
    package func resume(file: StaticString, line: UInt) {
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
    package var isDelivering: Bool { machine.isDelivering }

    /// The number of the delivery under way (or of the last one): main thread, inside updaters.
    package var deliverySerial: UInt64 { machine.deliverySerial }

    /// Whether the delivery under way was forced (`update()`, a refresh): main thread, inside updaters.
    package var isForcedDelivery: Bool { isOnSchedulerThread && machine.delivering?.isForced == true }

    /// Whether the delivery under way is the rules' early non-animated flush: main thread, inside updaters.
    package var isEarlyFlushDelivery: Bool { isOnSchedulerThread && machine.delivering?.isEarlyFlush == true }

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

    package func requireMainThread(_ api: String) {
        if !isOnSchedulerThread {
            fatalError("ViewUpdatingContext.\(api) must be called on the main thread (the scheduler's thread)")
        }
    }
}

// What any thread uses and no delivery does: the updaters, the layers' faces, and cancellation when the context
// goes. Everything here runs under the storage's lock and releases what it removed after leaving it.
extension UpdateStorage {
    func addUpdater(_ call: @escaping (Bool) -> Void) -> UInt64 {
        withShared { $0.updaters.append(call) }
    }

    /// Adds the `ViewUpdating` owner's updater (`startUpdatingView()`), unless it is connected now: one lock
    /// for the check and the registration, the one `removeAllUpdaters()` clears the mark under, so that a
    /// removal racing a start leaves the owner connected once or not at all. Returns the id, or `nil`.
    func addOwnerUpdater(_ call: @escaping (Bool) -> Void) -> UInt64? {
        // (On the scheduler's thread: `startUpdatingView()` is there.)
        machine.diagnostics.bits.insert(.ownerConnected)
        return withShared { shared in
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

    /// The face of type `Face`, if one was adopted. Any thread.
    package func face<Face: AnyObject & Sendable>(_ type: Face.Type) -> Face? {
        withShared { $0.faces[ObjectIdentifier(type)] } as? Face
    }

    /// Keeps `face` unless a face of its type is kept already (then returns that one, and `face` is released
    /// by the caller, outside the lock). A context that is gone keeps nothing. Any thread.
    package func adopt<Face: AnyObject & Sendable>(_ face: Face) -> Face {
        let kept = withShared { shared -> (any AnyObject & Sendable)? in
            if isCancelled { return nil }
            if let kept = shared.faces[ObjectIdentifier(Face.self)] { return kept }
            shared.faces[ObjectIdentifier(Face.self)] = face
            return face
        }
        return kept as? Face ?? face
    }

    /// The context is gone: deliver nothing more; drop the updaters, the inbox, the pending transaction and the
    /// faces now (the machine learns it on its thread, at its next request or turn).
    func cancel() {
        let dropped = withShared {
            shared -> (
                [UpdaterEntry], [InboxEntry], [UpdateTransaction], [any AnyObject & Sendable], CoalescingScheduler?
            ) in
            cvu_flag_store_release(flags + Self.cancelledFlag, true)
            defer {
                shared.inbox.removeAll()
                shared.pendingTransaction.removeAll()
                shared.faces.removeAll()
                shared.scheduler = nil
            }
            return (
                shared.updaters.removeAll(), shared.inbox, shared.pendingTransaction, Array(shared.faces.values),
                shared.scheduler
            )
        }
        for case let transaction? in dropped.1.map(\.transaction) { transaction.tellDropped(.contextReleased) }
        for transaction in dropped.2 { transaction.tellDropped(.contextReleased) }
        // The updaters, the faces (a face's deinit ends what it runs) and the scheduler (maybe a user's
        // subclass) are released here, after the lock: the scheduler no longer holds this storage alive through
        // a cycle, and goes now if nothing else uses it.
    }

    /// The scheduler, retained, while the context lives (`nil` once it is gone): what a caller from
    /// outside the context (a lifecycle refresh, a subscription, a tracked change) holds while it calls in.
    func retainedScheduler() -> CoalescingScheduler? {
        withShared { $0.scheduler }
    }
}

// MARK: - The state machine

/// The state of one context on its main thread, as a pure value, shaped like swift-async-algorithms'
/// `DebounceStateMachine`: a ``Phase`` that carries what is valid in it, and events that each answer with the
/// action the caller (``UpdateStorage``) carries out, outside any lock — where user code runs. Confined to the
/// scheduler's thread.
///
/// The precedence rules (CONTRACT.md's table is the spec), with `f` the pending explicit flag:
///
/// | event | effect |
/// | --- | --- |
/// | `setNeedsUpdate(nil)` | schedule; `f` unchanged |
/// | `setNeedsUpdate(false)` | `f = false`; schedule |
/// | `setNeedsUpdate(true)` while `f == false` | deliver `false` now; then `f = true`; schedule |
/// | `setNeedsUpdate(true)` otherwise | `f = true`; schedule |
/// | `update(a)` | if `a` is given, `f = a`; deliver now; the scheduled update is cancelled |
/// | any delivery | delivers `f ?? default`; then `f = nil` |
/// | the end of a cycle | if scheduled, deliver once |
///
/// While suspended nothing is delivered: requests (and `update`) are kept, and the last `resume()` delivers
/// them once (forced when an `update` was kept). A `true` that would flush early leaves `f == false` instead,
/// so that changes requested as non-animated never animate.
///
/// On the data path there are three events: a request (``request(_:defaultAnimated:)``), a turn
/// (``turn(serial:)``, whose end of cycle comes once the turn has applied the inbox), and a delivery's end
/// (``deliveryEnded(inboxHasRequests:)``). An action that delivers has already begun the delivery: the phase is
/// ``Phase/delivering(_:next:)`` when it returns.
package struct UpdateStateMachine {
    /// What the context is doing.
    enum Phase: Equatable {
        /// Nothing requested since the last delivery began.
        case idle
        /// Requested and not delivered yet: due at the end of the cycle.
        case scheduled(Pending)
        /// Requested while suspended: kept for the last `resume()`, never a no-op (a request reaches the machine,
        /// which notices a suspension that lasts).
        case held(Pending)
        /// Updaters are running. `next` is what is due after this delivery: the animated request behind the
        /// rules' early flush, or what `resume()` kept while they ran.
        case delivering(Delivery, next: Pending?)
        /// The context is gone: nothing is delivered or scheduled any more.
        case cancelled
    }

    /// What is requested and not delivered yet.
    struct Pending: Equatable {
        /// The pending explicit flag, `f`.
        var flag: Bool?
        /// Whether it stands for an `update()` kept while suspended: a forced delivery, which renders even what
        /// has not changed.
        var isForced = false
    }

    /// What an event asks of the caller.
    enum Action: Equatable {
        /// Nothing to do now (already listed, suspended, or the context is gone).
        case none
        /// List the context with its scheduler for the end of this cycle.
        case list
        /// Deliver now — the delivery has begun (an early non-animated flush, `update()`, what is pending at
        /// `updateIfNeeded()` or `resume()`); `list`: also list the context (what the request scheduled behind it).
        case deliver(Delivery, list: Bool)
        /// Updaters are running: the request waits in the inbox for a later cycle (never recursively).
        case `defer`
    }

    /// What a scheduler's turn asks of the caller.
    enum TurnAction: Equatable {
        /// Apply the inbox (its requests are this turn's), then take ``endOfTurn(defaultAnimated:)``.
        case run
        /// Already ran in this turn (listed twice), applying its inbox in a turn (a nested pass there), or gone:
        /// nothing now. The listing taken may have been the inbox's: the caller lets the next request from
        /// another thread, or the drain under way, list the context again.
        case skip
        /// Updaters are running (a nested run loop inside one turned the scheduler): the turn passes this context
        /// by, and ``deliveryEnded(inboxHasRequests:)`` lists it again, so what is pending is delivered in the next
        /// cycle after the updater returns.
        case missed
    }

    /// Whether and how the context is listed with its scheduler.
    struct Listing {
        /// The serial of the last turn this context ran in (0: none), truncated (a turn's serial is compared with
        /// the one a context saw in the same turn, or a recent one).
        var lastTurn: UInt32 = 0
        /// The serial of the last turn that parked this context (a turn in a private mode), truncated.
        var parkedTurn: UInt32 = 0
        /// In the scheduler's own-thread list for the next turn.
        var isAsked = false
        /// A turn is applying the inbox: requests then need no listing, the turn's end delivers them ("all
        /// requests made before a cycle begins are delivered by that cycle as one").
        var isInTurn = false
        /// A turn passed the context by while its updaters ran (``TurnAction/missed``).
        var isMissed = false
    }

    /// What the requests' transactions carry beside the rules, on this thread (made on the first transaction: a
    /// context that never sees one pays a word for it; the pending transaction itself is the storage's, under its
    /// lock, where a release on any thread finds it). They partition exactly as the rules do: a delivery absorbs
    /// everything pending, except that the rules' early flush absorbs what was pending *before* the animated
    /// request that caused it.
    struct Carried {
        /// The transaction of the delivery under way, as its updaters see it.
        var delivering: UpdateTransaction?
        /// The fast path of a repeated plain transaction: the animation of the last plain transaction (an
        /// animation, nothing else) merged while nothing else changed what is pending — a request repeating it
        /// on a dirty context changes nothing.
        var repeatAnimation: UpdateAnimation?
    }

    /// What diagnostics remember between requests and deliveries.
    struct Diagnostics {
        /// Requests made on this thread, or applied from the inbox, since the last delivery began (wrapping).
        var absorbed: UInt32 = 0
        /// When a slow report last named the context (the scheduler's clock, in milliseconds, wrapping; with
        /// ``DiagnosticsBits/named``).
        var namedAt: UInt32 = 0
        var bits = DiagnosticsBits()
        /// Consecutive deliveries inside which the context was requested again (an update loop at 60).
        var loopCount: UInt8 = 0
        /// When the first of the suspensions under way began (the scheduler's clock, in milliseconds, wrapping).
        var suspendedAt: UInt32 = 0
    }

    // The fields in this order leave no padding between them (an idle context's storage fits a smaller
    // allocation).
    /// Counts deliveries (the one under way has this number).
    private(set) var deliverySerial: UInt64 = 0
    private(set) var listing = Listing()
    /// Whether the storage holds a pending transaction, so that requests and deliveries without one never look.
    var hasPendingTransaction = false
    /// Nesting depth of `suspend()`.
    private(set) var suspensions: Int32 = 0
    /// At most one (see ``Carried``).
    var carried: [Carried] = []
    var diagnostics = Diagnostics()
    private(set) var phase = Phase.idle

    var isSuspended: Bool { suspensions > 0 }
    var isCancelled: Bool { phase == .cancelled }

    package var isDelivering: Bool {
        if case .delivering = phase { return true }
        return false
    }

    /// The delivery under way, if updaters are running.
    var delivering: Delivery? {
        if case .delivering(let delivery, _) = phase { return delivery }
        return nil
    }

    /// What is due: requested and not yet delivered (behind the delivery under way, too).
    var due: Pending? {
        switch phase {
        case .scheduled(let pending), .held(let pending): pending
        case .delivering(_, let next): next
        case .idle, .cancelled: nil
        }
    }

    /// Whether `setNeedsUpdate(animated: flag)` would change nothing: the lock-free fast path.
    @inline(__always)
    func isNoOp(_ flag: Bool?) -> Bool {
        guard case .scheduled(let pending) = phase else { return false }
        return flag == nil || flag == pending.flag
    }

    // MARK: Event: a request

    /// A request on the main thread (or applied from the inbox): `setNeedsUpdate(animated:)` or `update(animated:)`.
    mutating func request(_ request: UpdateRequest, defaultAnimated: Bool) -> Action {
        var pending = Pending()
        var first = true
        switch phase {
        case .cancelled: return .none
        case .delivering: return .defer
        case .idle: break
        case .scheduled(let scheduled), .held(let scheduled): (pending, first) = (scheduled, false)
        }
        // While suspended everything is kept for the last `resume()`: `f == false` too (a `true` does not flush:
        // the earlier non-animated changes must not animate), and an `update()` as a forced delivery.
        if isSuspended {
            switch request {
            case .setNeedsUpdate(true) where pending.flag == false: break
            case .setNeedsUpdate(let flag): if let flag { pending.flag = flag }
            case .update(let flag):
                if let flag { pending.flag = flag }
                pending.isForced = true
            }
            phase = .held(pending)
            return .none
        }
        switch request {
        case .setNeedsUpdate(true) where pending.flag == false:
            // The earlier non-animated changes are delivered now; this request is the next delivery's.
            pending.flag = true
            return .deliver(begin(Delivery(animated: false, isEarlyFlush: true), next: pending), list: false)
        case .setNeedsUpdate(let flag):
            if let flag { pending.flag = flag }
            phase = .scheduled(pending)
            return first && list() ? .list : .none
        case .update(let flag):
            if let flag { pending.flag = flag }
            return .deliver(begin(Delivery(animated: pending.flag ?? defaultAnimated, isForced: true)), list: false)
        }
    }

    /// An animated change is about to land while `f == false`: the early non-animated flush that
    /// `setNeedsUpdate(true)` would make, made now — before the change — so that it shows the state before it.
    /// `f` is cleared and the update stays due; the request that follows the change sets the flag. Nothing while
    /// suspended (`f == false` is kept, as `setNeedsUpdate(true)` keeps it), while updaters run (requests made
    /// there wait in the inbox) or once the context is gone.
    mutating func flushBeforeAnimatedChange() -> Action {
        guard case .scheduled(var pending) = phase, pending.flag == false else { return .none }
        pending.flag = nil
        return .deliver(begin(Delivery(animated: false, isEarlyFlush: true), next: pending), list: false)
    }

    /// `updateIfNeeded()`: what is due, delivered now (nothing while updaters run or suspended); also what a scope's
    /// entry flushes (`isScopeFlush`, as recording names the delivery).
    mutating func deliverDue(defaultAnimated: Bool, isScopeFlush: Bool = false) -> Action {
        guard let delivery = beginDue(defaultAnimated: defaultAnimated, isScopeFlush: isScopeFlush) else {
            return .none
        }
        return .deliver(delivery, list: false)
    }

    /// `suspend()` at `now` (the scheduler's clock, in milliseconds): what is due is held for the last `resume()`.
    mutating func suspend(at now: UInt32) {
        precondition(suspensions < .max, "ViewUpdatingContext.suspend() nested too deeply")
        if suspensions == 0 { diagnostics.suspendedAt = now }
        suspensions += 1
        if case .scheduled(let pending) = phase { phase = .held(pending) }
    }

    /// Ends one suspension; the last one delivers what was kept — or, while updaters run, lists the context for
    /// the next turn, whose end of cycle delivers it (never recursively).
    mutating func resume(defaultAnimated: Bool) -> Action {
        precondition(suspensions > 0, "ViewUpdatingContext.resume() called more times than suspend()")
        suspensions -= 1
        guard !isSuspended, due != nil else { return .none }
        if isDelivering { return list() ? .list : .none }
        if case .held(let pending) = phase { phase = .scheduled(pending) }
        return deliverDue(defaultAnimated: defaultAnimated)
    }

    // MARK: Event: a turn

    /// A turn in a mode that does not admit view updates: the context stays listed, parked until a common pass.
    /// `false` when this turn has already parked it (it is listed twice).
    mutating func park(serial: UInt64) -> Bool {
        let serial = UInt32(truncatingIfNeeded: serial)
        if listing.parkedTurn == serial { return false }
        listing.parkedTurn = serial
        return true
    }

    /// A turn in a common mode reached the context.
    @inline(__always)
    mutating func turn(serial: UInt64) -> TurnAction {
        let serial = UInt32(truncatingIfNeeded: serial)
        // A nested run loop inside an updater (possibly one delivered while the inbox was being applied).
        if isDelivering {
            listing.isAsked = false
            listing.isMissed = true
            return .missed
        }
        // A nested pass while a turn applies this context's inbox (user code there: a replaced transaction value's
        // `deinit` running a nested loop) reached its other listing: the turn under way delivers what it applied
        // at its end, and the drain lists again what was posted after it took the inbox.
        if listing.isInTurn || listing.lastTurn == serial { return .skip }
        listing.lastTurn = serial
        listing.isAsked = false
        if isCancelled { return .skip }
        listing.isInTurn = true
        return .run
    }

    /// The end of the cycle, once the turn applied the inbox: the delivery it begins, if anything is due.
    @inline(__always)
    mutating func endOfTurn(defaultAnimated: Bool) -> Delivery? {
        precondition(listing.isInTurn, "UpdateStateMachine: endOfTurn outside a turn (state: \(self))")
        listing.isInTurn = false
        return beginDue(defaultAnimated: defaultAnimated)
    }

    // MARK: Event: a delivery's end

    /// The updaters have returned. `true` when the caller must list the context again: a turn passed it by
    /// meanwhile, it is listed nowhere now, and a turn would find work (`inboxHasRequests`: what the updaters
    /// asked for waits there).
    mutating func deliveryEnded(inboxHasRequests: @autoclosure () -> Bool) -> Bool {
        // One more cycle towards an update loop when the updaters requested their own context, else none.
        if diagnostics.bits.remove(.requestedInDelivery) == nil {
            diagnostics.loopCount = 0
        } else if diagnostics.loopCount < DiagnosticsThresholds.loopCycles {
            diagnostics.loopCount += 1
        }
        guard case .delivering(_, let next) = phase else {
            // Gone while its updaters ran (the caller learned it and cancelled): nothing more to list.
            precondition(isCancelled, "UpdateStateMachine: deliveryEnded with no delivery under way (state: \(self))")
            return false
        }
        phase = next.map { isSuspended ? .held($0) : .scheduled($0) } ?? .idle
        guard listing.isMissed else { return false }
        listing.isMissed = false
        // Even inside a turn that is applying the inbox: what the updaters posted meanwhile came after the part
        // of the inbox that turn applies.
        if listing.isAsked { return false }
        guard next != nil && !isSuspended || inboxHasRequests() else { return false }
        listing.isAsked = true
        return true
    }

    /// The context is gone: nothing is delivered or scheduled any more.
    mutating func cancel() {
        phase = .cancelled
        suspensions = 0
        hasPendingTransaction = false
    }

    /// What the delivery beginning now absorbed, taken; and whether recording noted its first request.
    mutating func takeDiagnostics() -> (absorbed: UInt32, siteNoted: Bool) {
        defer { forgetDiagnostics() }
        return (diagnostics.absorbed, diagnostics.bits.contains(.recordedSite))
    }

    /// A delivery that nothing watches begins: what it absorbed is forgotten (and a site noted for it, so that
    /// no later delivery names a stale one: see ``DiagnosticsBits/recordedSite``).
    @inline(__always)
    mutating func forgetDiagnostics() {
        diagnostics.absorbed = 0
        diagnostics.bits.remove(.recordedSite)
    }

    // MARK: Inside the machine

    /// Begins `delivery`; `next` is what stays due behind it.
    private mutating func begin(_ delivery: Delivery, next: Pending? = nil) -> Delivery {
        phase = .delivering(delivery, next: next)
        deliverySerial &+= 1
        return delivery
    }

    /// Begins the delivery of what is due, if something is and the context is not suspended: `f ?? default`.
    private mutating func beginDue(defaultAnimated: Bool, isScopeFlush: Bool = false) -> Delivery? {
        guard case .scheduled(let pending) = phase else { return nil }
        var delivery = Delivery(animated: pending.flag ?? defaultAnimated, isForced: pending.isForced)
        delivery.isScopeFlush = isScopeFlush
        return begin(delivery)
    }

    /// `true` when the caller must list the context: not inside a turn that delivers what is due anyway, not
    /// listed already (then it is, from now on).
    private mutating func list() -> Bool {
        guard !listing.isInTurn, !listing.isAsked else { return false }
        listing.isAsked = true
        return true
    }

    // MARK: The inbox

    /// Adds `entry` to `inbox` unless its request changes nothing there (then its note joins the last entry's),
    /// so that the inbox stays a handful of entries however many requests other threads make between two
    /// cycles:
    ///
    /// - `setNeedsUpdate` after another one changes nothing when its flag is `nil` or the same.
    /// - `false`, `true`, `false`, `true` delivers `n` at each `true`, at the same instant, showing the
    ///   same state: the second pair adds nothing, so it collapses to `false`, `true`.
    /// - A refresh (`update(nil)`) when one is already waiting replaces it, at the end: they arrive
    ///   together, and the last thing asked was a refresh, so the cycle's last delivery is the forced one
    ///   (a forced delivery absorbs what was requested before it).
    static func enqueue(_ entry: InboxEntry, into inbox: inout [InboxEntry]) {
        var entry = entry
        switch (inbox.last?.plainRequest, entry.plainRequest) {
        case (.setNeedsUpdate?, .setNeedsUpdate(nil)):
            inbox[inbox.count - 1].absorb(entry)
            return
        case (.setNeedsUpdate(let last)?, .setNeedsUpdate(let flag)) where last == flag:
            inbox[inbox.count - 1].absorb(entry)
            return
        case (.setNeedsUpdate(false)?, .setNeedsUpdate(true)):
            let count = inbox.count
            if count >= 3, inbox[count - 3].plainRequest == .setNeedsUpdate(false),
                inbox[count - 2].plainRequest == .setNeedsUpdate(true)
            {
                let removed = inbox.removeLast()  // … F T F + T → … F T
                inbox[count - 2].absorb(removed)
                inbox[count - 2].absorb(entry)
                return
            }
        case (_, .update(nil)):
            if let earlier = inbox.firstIndex(where: { $0.plainRequest == .update(nil) }) {
                var merged = inbox.remove(at: earlier)
                merged.absorb(entry)
                (entry.note, entry.owner) = (merged.note, merged.owner)
            }
        default:
            break
        }
        inbox.append(entry)
    }
}

// MARK: - Requests, deliveries, updaters

/// One request, as the rules see it (a transaction it carries rides beside it: its animation is the flag).
enum UpdateRequest: Equatable, Sendable {
    case setNeedsUpdate(Bool?)
    case update(Bool?)

    /// `update()` (or `update(transaction:)`): delivered at once.
    var isUpdate: Bool {
        if case .update = self { true } else { false }
    }

    /// `animated: true`: without a transaction, the delivery's animation becomes the default one.
    var isAnimated: Bool { self == .setNeedsUpdate(true) || self == .update(true) }
}

/// What diagnostics count of a request: how many requests it stands for (the inbox merges those that change
/// nothing), and where it was made — asked only while recording, or for a request made inside its context's own
/// delivery (towards the update-loop report). It is counted, and its site recorded, where it is *applied* on the
/// main thread — for the delivery that absorbs it: before the request, or, when the request makes the rules'
/// early flush, right after that flush began (the flush shows what came before it).
struct RequestNote {
    var site: RequestSite?
    var count: UInt32 = 1
    /// Whether the site is recorded (recording was on where the request was made).
    var isRecorded: Bool

    /// A note made where the request is made: its site is recorded while recording is on.
    init(_ site: RequestSite?) {
        self.site = site
        isRecorded = site != nil && cvu_diagnostics_is_recording()
    }

    /// A note made where the request is made, asking for its site only while recording or when `needed`.
    @inline(__always)
    init(_ site: () -> RequestSite?, needed: Bool) {
        self.init(needed || cvu_diagnostics_is_recording() ? site() : nil)
    }

    /// This note for a request made on another thread than the one that applies it: a recorded site becomes
    /// its call site, taken here (it names this thread).
    func carried() -> RequestNote {
        guard isRecorded, let site else { return self }
        var note = self
        note.site = RequestSite(.recorded(site.callSite))
        return note
    }

    /// Another request merged into this one (it came later): counted, its site kept if this one has none.
    mutating func absorb(_ later: RequestNote) {
        count &+= later.count
        if !isRecorded, later.isRecorded { (site, isRecorded) = (later.site, true) }
    }
}

/// A request waiting in the inbox, with the transaction it carries, its note, and the `ViewUpdating` object
/// that made it (while none is connected: for the report of an owner that never connects).
struct InboxEntry {
    var request: UpdateRequest
    var transaction: UpdateTransaction?
    var note: RequestNote
    weak var owner: AnyObject?

    /// The request, when it carries no transaction: what the inbox may merge with its neighbours.
    var plainRequest: UpdateRequest? { transaction == nil ? request : nil }

    /// A later request merged into this one: its note counted, its owner kept if this one has none.
    mutating func absorb(_ later: InboxEntry) {
        note.absorb(later.note)
        if owner == nil { owner = later.owner }
    }
}

/// What one delivery passes to the updaters.
struct Delivery: Equatable, Sendable {
    /// The flag every updater gets.
    var animated: Bool
    /// Whether it was asked for by `update()` (or a lifecycle refresh): it renders even what has not
    /// changed. End-of-cycle deliveries and early non-animated flushes are not forced.
    var isForced = false
    /// Whether it is the precedence rules' early non-animated flush (`false` then `true`): an animated
    /// delivery is due right after it. Decided when the rules see the requests, in the order they are applied
    /// — which, for requests from other threads, can differ from the order of the changes.
    var isEarlyFlush = false
    /// Whether it is what an animating scope's entry flushed (recording names it so).
    var isScopeFlush = false
}

/// An updater as stored: called on the main thread with the delivery's flag.
struct UpdaterEntry {
    /// Increasing in registration order, never reused within one context.
    let id: UInt64
    let call: (Bool) -> Void
}

/// The registered updaters, in registration order (so in increasing ``UpdaterEntry/id``). The first is
/// stored inline: most contexts have exactly one, and then no array is allocated.
///
/// A delivery walks it one entry at a time with ``next(after:upTo:)``, under the context's lock, and
/// calls each entry outside the lock: an updater removed while a delivery runs (by an earlier updater
/// of the same delivery, or from another thread) is never called again, and one added during a delivery
/// first runs in the next one.
struct UpdaterList {
    // Invariant: `rest` is empty whenever `first` is nil.
    private var first: UpdaterEntry?
    private var rest: [UpdaterEntry] = []
    private var lastID: UInt64 = 0

    var count: Int { first == nil ? 0 : 1 + rest.count }

    /// The id of the newest registration (0: none yet): a delivery calls entries up to it.
    var newestID: UInt64 { lastID }

    /// Registers `call`; returns its id.
    mutating func append(_ call: @escaping (Bool) -> Void) -> UInt64 {
        lastID += 1
        let entry = UpdaterEntry(id: lastID, call: call)
        if first == nil {
            first = entry
        } else {
            rest.append(entry)
        }
        return lastID
    }

    /// The first entry with an id above `id` and at most `limit`, if any.
    func next(after id: UInt64, upTo limit: UInt64) -> UpdaterEntry? {
        guard let head = first else { return nil }
        if head.id > id { return head.id <= limit ? head : nil }
        // Binary search in `rest` (ids increase) for the first id above `id`.
        var low = 0
        var high = rest.count
        while low < high {
            let middle = (low + high) / 2
            if rest[middle].id <= id { low = middle + 1 } else { high = middle }
        }
        guard low < rest.count, rest[low].id <= limit else { return nil }
        return rest[low]
    }

    /// Whether the updater with `id` is registered (O(log n)).
    func contains(id: UInt64) -> Bool {
        id > 0 && next(after: id - 1, upTo: id) != nil
    }

    /// Removes the updater with `id`; returns what was removed (to be released outside the lock).
    mutating func remove(id: UInt64) -> UpdaterEntry? {
        if let head = first, head.id == id {
            first = rest.isEmpty ? nil : rest.removeFirst()
            return head
        }
        guard let index = rest.firstIndex(where: { $0.id == id }) else { return nil }
        return rest.remove(at: index)
    }

    /// Removes everything; returns it (to be released outside the lock).
    mutating func removeAll() -> [UpdaterEntry] {
        guard let head = first else { return [] }
        defer {
            first = nil
            rest = []
        }
        return [head] + rest
    }
}
