/// The state of one context on its main thread, as a pure value: the pending request (the animated-flag
/// precedence rules' state), the suspensions, whether the context is registered for a turn, whether a
/// turn or a delivery is under way, and whether the context is gone. Every event returns the action the
/// caller must take; the caller (``UpdateStorage``) performs it, outside any lock, and calls user code
/// only there. Confined to the scheduler's thread.
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
/// While suspended nothing is delivered: requests (and `update`) are kept, and the last `resume()`
/// delivers them once (forced when an `update` was kept). A `true` that would flush early leaves
/// `f == false` instead, so that changes requested as non-animated never animate.
package struct UpdateStateMachine {
    /// What is requested and not yet delivered.
    struct Pending: Equatable {
        /// The pending explicit flag, `f`.
        var flag: Bool?
        /// Whether a delivery is due at the end of the cycle (or on resume, while suspended).
        var isScheduled = false
        /// Whether the scheduled delivery stands for an `update()` kept while suspended: a forced delivery,
        /// which renders even what has not changed.
        var isForced = false
    }

    /// What a request, `update()` or `resume()` asks of the caller.
    enum Action: Equatable {
        /// Nothing to do now (already scheduled, suspended, or the context is gone).
        case none
        /// Register with the scheduler for the end of this cycle.
        case askForTurn
        /// Deliver now (an early non-animated flush, or `update()`); when `askForTurn`, also register
        /// for the end of this cycle (what the request scheduled after the flush).
        case deliverNow(Delivery, askForTurn: Bool)
        /// Updaters are running: put this request in the inbox, for a later cycle (never recursively).
        case deferToInbox(UpdateRequest)

        /// Whether it is the rules' early non-animated flush.
        var isEarlyFlush: Bool {
            if case .deliverNow(let delivery, _) = self { return delivery.isEarlyFlush }
            return false
        }
    }

    /// What a scheduler's turn asks of the caller.
    enum TurnAction: Equatable {
        /// Already ran in this turn (the context was listed twice), is running in a turn that applies its inbox
        /// (a nested pass there), or gone: do nothing now. The listing it took may have been the inbox's: the
        /// caller lets the next request from another thread, or the drain under way, list the context again.
        case skip
        /// Updaters are running (a nested run loop inside one turned the scheduler): the turn passes this
        /// context by. It is no longer registered anywhere; ``deliveryEnded(inboxHasRequests:)`` registers it again, so what
        /// is pending is delivered in the next cycle after the updater returns.
        case missed
        /// Drain the inbox (its requests are applied inside the turn), then call ``turnEnded(defaultAnimated:)``.
        case run
    }

    // The 8-byte fields first, then the 4-byte ones, then the small ones together, with no padding, which
    // lets the context's storage fit a smaller allocation.
    /// Counts deliveries (the one under way has this number).
    private(set) var deliverySerial: UInt64 = 0
    /// The serial of the last turn this context ran in (0: none).
    private(set) var lastTurn: UInt64 = 0
    /// The serial of the last turn that parked this context (a turn in a private mode).
    private(set) var parkedTurn: UInt64 = 0
    /// The context's transaction ledger once it has seen a transaction (the storage's: kept here for the main
    /// thread's fast path, see `UpdateStorage+Transactions.swift`).
    var ledger: TransactionLedger?
    /// Diagnostics: requests applied since the last delivery began (wrapping), counted by the storage.
    var absorbed: UInt32 = 0
    /// Diagnostics: when a slow report last named the context (the scheduler's clock, in milliseconds, wrapping;
    /// with ``DiagnosticsBits/named``).
    var namedAt: UInt32 = 0
    /// Nesting depth of `suspend()`.
    private(set) var suspensions: Int32 = 0
    private(set) var pending = Pending()
    /// Whether the ledger holds a pending transaction (kept by the storage), so that deliveries and requests
    /// without transactions never look for the ledger.
    var hasPendingTransaction = false
    /// Whether a request reached the machine since ``watchRequests()``.
    private(set) var heardRequest = false
    /// Whether the context is in the scheduler's own-thread list for the next turn.
    private(set) var isTurnAsked = false
    /// Whether a turn is applying the inbox: requests then need no turn of their own, this turn's end
    /// delivers them ("all requests made before a cycle begins are delivered by that cycle as one").
    private(set) var isInTurn = false
    /// Whether a turn passed this context by while its updaters ran (see ``TurnAction/missed``).
    private(set) var missedTurn = false
    private(set) var isCancelled = false
    /// Diagnostics: what they remember between requests and deliveries (counted by the storage).
    var diagnostics = DiagnosticsBits()
    /// Diagnostics: consecutive deliveries inside which the context was requested again (an update loop
    /// at 60); counted by the storage.
    var loopCount: UInt8 = 0
    /// The delivery under way (updaters are running), if any.
    private(set) var delivering: Delivery?

    package var isDelivering: Bool { delivering != nil }
    var isSuspended: Bool { suspensions > 0 }

    /// Whether `setNeedsUpdate(animated: flag)` would change nothing: the lock-free fast path.
    @inline(__always)
    func isNoOp(_ flag: Bool?) -> Bool {
        delivering == nil && pending.isScheduled && (flag == nil || flag == pending.flag)
    }

    // MARK: Requests

    /// `setNeedsUpdate(animated: flag)` on the main thread (or applied from the inbox).
    @inline(__always)
    mutating func setNeedsUpdate(_ flag: Bool?) -> Action {
        if isCancelled { return .none }
        heardRequest = true
        if delivering != nil { return .deferToInbox(.setNeedsUpdate(flag)) }
        if flag == true, pending.flag == false {
            // While suspended `f == false` is kept for resume: the earlier non-animated changes must not
            // animate. Otherwise they are delivered now, and this request is the next delivery's.
            if isSuspended { return schedule() ? .askForTurn : .none }
            pending.flag = true
            let ask = schedule()
            return .deliverNow(Delivery(animated: false, isForced: false, isEarlyFlush: true), askForTurn: ask)
        }
        if let flag { pending.flag = flag }
        return schedule() ? .askForTurn : .none
    }

    /// An animated change is about to land while `f == false`: the early non-animated flush that
    /// `setNeedsUpdate(true)` would make, made now — before the change — so that it shows the state before
    /// it. `f` is cleared and the update stays scheduled; the request that follows the change sets the
    /// flag. Nothing while suspended (`f == false` is kept, as `setNeedsUpdate(true)` keeps it), while
    /// updaters run (requests made there wait in the inbox, applied in order in a later cycle) or once the
    /// context is gone.
    mutating func flushBeforeAnimatedChange() -> Action {
        guard !isCancelled, delivering == nil, pending.flag == false, !isSuspended else { return .none }
        pending.flag = nil
        return .deliverNow(Delivery(animated: false, isForced: false, isEarlyFlush: true), askForTurn: false)
    }

    /// `update(animated: flag)`, or a lifecycle refresh (`flag == nil`). While suspended it is kept, as a
    /// forced delivery for the last `resume()`.
    mutating func update(_ flag: Bool?, defaultAnimated: Bool) -> Action {
        if isCancelled { return .none }
        heardRequest = true
        if delivering != nil { return .deferToInbox(.update(flag)) }
        if let flag { pending.flag = flag }
        if isSuspended {
            pending.isScheduled = true
            pending.isForced = true
            return .none
        }
        return .deliverNow(Delivery(animated: take(defaultAnimated), isForced: true), askForTurn: false)
    }

    /// One request from the inbox.
    mutating func apply(_ request: UpdateRequest, defaultAnimated: Bool) -> Action {
        switch request {
        case .setNeedsUpdate(let flag): setNeedsUpdate(flag)
        case .update(let flag): update(flag, defaultAnimated: defaultAnimated)
        }
    }

    /// `updateIfNeeded()`: what is scheduled, delivered now (nothing while updaters run); also what an
    /// animating scope's entry flushes (`isScopeFlush`, as recording names the delivery).
    mutating func updateIfNeeded(defaultAnimated: Bool, isScopeFlush: Bool = false) -> Action {
        if isCancelled || delivering != nil { return .none }
        guard var delivery = endOfCycle(defaultAnimated: defaultAnimated) else { return .none }
        delivery.isScopeFlush = isScopeFlush
        return .deliverNow(delivery, askForTurn: false)
    }

    mutating func suspend() {
        precondition(suspensions < .max, "ViewUpdatingContext.suspend() nested too deeply")
        suspensions += 1
    }

    /// Starts watching what is requested (while `animateWithFlushedUpdates`'s changes run on a context that
    /// could not deliver what was pending): the pending update is marked unscheduled, so that no request is a
    /// fast-path no-op — each one reaches the machine (and is applied by the rules, after what was pending, or
    /// waits in the inbox while updaters run). Returns what ``endWatchingRequests(_:)`` needs.
    mutating func watchRequests() -> Watch {
        defer { (heardRequest, pending.isScheduled) = (false, false) }
        return Watch(wasScheduled: pending.isScheduled, serial: deliverySerial, outerHeard: heardRequest)
    }

    /// Whether anything was requested since ``watchRequests()``; what was pending before stays scheduled,
    /// unless a delivery meanwhile (`update()`) took it. A watch around this one (a flushed animation whose
    /// changes make another) keeps what it heard, and hears this one's requests too.
    mutating func endWatchingRequests(_ watch: Watch) -> Bool {
        if watch.wasScheduled && deliverySerial == watch.serial { pending.isScheduled = true }
        let heard = heardRequest
        heardRequest = heard || watch.outerHeard
        return heard
    }

    /// What ``endWatchingRequests(_:)`` puts back.
    struct Watch {
        let wasScheduled: Bool
        let serial: UInt64
        let outerHeard: Bool
    }

    /// Ends one suspension; the last one delivers what was kept — or, while updaters are running, lists the
    /// context for the next turn, whose end of cycle delivers it (never recursively).
    mutating func resume(defaultAnimated: Bool) -> Action {
        precondition(suspensions > 0, "ViewUpdatingContext.resume() called more times than suspend()")
        suspensions -= 1
        guard !isCancelled, !isSuspended, pending.isScheduled else { return .none }
        if delivering != nil { return listForTurn() ? .askForTurn : .none }
        return endOfCycle(defaultAnimated: defaultAnimated).map { .deliverNow($0, askForTurn: false) } ?? .none
    }

    // MARK: Turns and deliveries

    /// A turn in a mode that does not admit view updates: the context stays registered, parked until a
    /// common pass. Returns `false` when this turn has already parked it (it is listed twice).
    mutating func park(serial: UInt64) -> Bool {
        if parkedTurn == serial { return false }
        parkedTurn = serial
        return true
    }

    @inline(__always)
    mutating func turnBegan(serial: UInt64) -> TurnAction {
        // A nested run loop inside an updater (possibly one delivered while the inbox was being applied).
        if delivering != nil {
            isTurnAsked = false
            missedTurn = true
            return .missed
        }
        // A nested pass while a turn applies this context's inbox (user code there: a replaced transaction value's
        // `deinit` running a nested loop) reached its other listing: the turn under way delivers what it applied
        // at its end, and the drain lists again what was posted after it took the inbox.
        if isInTurn { return .skip }
        if lastTurn == serial { return .skip }
        lastTurn = serial
        isTurnAsked = false
        if isCancelled { return .skip }
        isInTurn = true
        return .run
    }

    /// The end of the cycle, after the inbox was applied: what to deliver, if anything is scheduled.
    @inline(__always)
    mutating func turnEnded(defaultAnimated: Bool) -> Delivery? {
        precondition(isInTurn, "UpdateStateMachine: turnEnded outside a turn (state: \(self))")
        isInTurn = false
        if isCancelled { return nil }
        return endOfCycle(defaultAnimated: defaultAnimated)
    }

    mutating func deliveryBegan(_ delivery: Delivery) {
        precondition(delivering == nil, "UpdateStateMachine: a delivery began inside another (state: \(self))")
        delivering = delivery
        deliverySerial &+= 1
    }

    /// The updaters have returned. Returns `true` when the caller must register for a turn again: a turn
    /// passed this context by meanwhile, it is registered nowhere now, and a turn would find work
    /// (`inboxHasRequests`: what the updaters asked for waits there).
    mutating func deliveryEnded(inboxHasRequests: @autoclosure () -> Bool) -> Bool {
        precondition(delivering != nil, "UpdateStateMachine: deliveryEnded with no delivery under way (state: \(self))")
        delivering = nil
        guard missedTurn else { return false }
        missedTurn = false
        // Even inside a turn that is applying the inbox: what the updaters posted meanwhile came after
        // the part of the inbox that turn applies.
        if isCancelled || isTurnAsked { return false }
        guard pending.isScheduled && !isSuspended || inboxHasRequests() else { return false }
        isTurnAsked = true
        return true
    }

    /// The context is gone: nothing is delivered or scheduled any more.
    mutating func cancel() {
        isCancelled = true
        pending = Pending()
        suspensions = 0
    }

    private mutating func endOfCycle(defaultAnimated: Bool) -> Delivery? {
        let forced = pending.isForced
        guard let value = endOfCycleValue(defaultAnimated) else { return nil }
        return Delivery(animated: value, isForced: forced)
    }

    /// The flag of the scheduled delivery, taken, if one is due now (scheduled, not suspended).
    private mutating func endOfCycleValue(_ defaultAnimated: Bool) -> Bool? {
        guard pending.isScheduled, !isSuspended else { return nil }
        return take(defaultAnimated)
    }

    /// Takes the pending request for a delivery: its flag, `f ?? default`.
    private mutating func take(_ defaultAnimated: Bool) -> Bool {
        defer { pending = Pending() }
        return pending.flag ?? defaultAnimated
    }

    /// Marks a delivery as scheduled; `true` when the caller must register for a turn (the first request of
    /// a cycle, not while suspended, not inside a turn that delivers it anyway, not already registered).
    private mutating func schedule() -> Bool {
        let first = !pending.isScheduled && !isSuspended
        pending.isScheduled = true
        return first && listForTurn()
    }

    /// `true` when the caller must register for a turn: not inside a turn that delivers what is pending anyway,
    /// not already registered (then it is, from now on).
    private mutating func listForTurn() -> Bool {
        guard !isInTurn, !isTurnAsked else { return false }
        isTurnAsked = true
        return true
    }

    // MARK: The inbox

    /// Adds `entry` to `inbox` unless its request changes nothing there (then its note joins the last
    /// entry's), so that the inbox stays a handful of entries however many requests other threads make between
    /// two cycles:
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
            inbox[inbox.count - 1].note.absorb(entry.note)
            return
        case (.setNeedsUpdate(let last)?, .setNeedsUpdate(let flag)) where last == flag:
            inbox[inbox.count - 1].note.absorb(entry.note)
            return
        case (.setNeedsUpdate(false)?, .setNeedsUpdate(true)):
            let count = inbox.count
            if count >= 3, inbox[count - 3].plainRequest == .setNeedsUpdate(false),
                inbox[count - 2].plainRequest == .setNeedsUpdate(true)
            {
                let removed = inbox.removeLast()  // … F T F + T → … F T
                inbox[count - 2].note.absorb(removed.note)
                inbox[count - 2].note.absorb(entry.note)
                return
            }
        case (_, .update(nil)):
            if let earlier = inbox.firstIndex(where: { $0.plainRequest == .update(nil) }) {
                var note = inbox.remove(at: earlier).note
                note.absorb(entry.note)
                entry.note = note
            }
        default:
            break
        }
        inbox.append(entry)
    }
}
