import CCoalescingSupport
import NotificationCoalescing

// How a context carries out what its state machine answers (main thread), and how another thread hands it
// a request (the inbox).

extension UpdateStorage {
    // MARK: Performing actions (main thread)

    /// The one place where the machine's answers are carried out.
    func perform(_ action: UpdateStateMachine.Action) {
        // Gone (released inside an updater that ran before this action): its scheduler may be gone too.
        if isCancelled {
            machinePointer.pointee.cancel()
            publishScheduled()
            return
        }
        publishScheduled()
        switch action {
        case .none:
            break
        case .askForTurn:
            withScheduler { $0.scheduleOnOwnerThread(self) }
        case .deliverNow(let delivery, let askForTurn):
            if askForTurn { withScheduler { $0.scheduleOnOwnerThread(self) } }
            deliver(delivery)
        case .deferToInbox(let request):
            post(request)
        }
    }

    /// Publishes the machine's `isScheduled`, and whether the pending explicit flag is `false` (a
    /// non-animated request is pending: bit 1, set only with bit 0), for other threads.
    @inline(__always)
    func publishScheduled() {
        let rules = machinePointer.pointee.rules
        let published: UInt8 = rules.isScheduled ? (rules.pendingFlag == false ? 3 : 1) : 0
        if cvu_byte_load_relaxed(flags + Self.scheduledFlag) != published {
            cvu_byte_store_release(flags + Self.scheduledFlag, published)
            if rules.isScheduled && rules.isSuspended { watchWhileSuspended() }
        }
    }

    /// Whether a non-animated request is pending — applied on the main thread, or waiting in the inbox —
    /// so that an animated change made now would be preceded by the rules' early non-animated flush. Any
    /// thread: a snapshot (the main thread may deliver right after).
    var hasNonAnimatedRequestPending: Bool {
        if cvu_byte_load_relaxed(flags + Self.scheduledFlag) & 2 != 0 { return true }
        guard inboxHasRequests else { return false }
        return withShared { shared in shared.inbox.contains { $0.isNonAnimated } }
    }

    /// Applies the inbox first, so that a main-thread request comes after what other threads asked
    /// before it. Not while updaters run: what they ask waits there for a later cycle.
    @inline(__always)
    func drainInboxIfNeeded() {
        if inboxHasRequests && !machinePointer.pointee.isDelivering { drainInbox() }
    }

    /// Applies what other threads (and re-entrant calls) put in the inbox, in arrival order.
    ///
    /// The inbox flag stays set until the requests are applied (and the machine's `isScheduled`
    /// published), so that `isUpdatePending`, asked from another thread meanwhile, never reads `false`
    /// for a request that is being applied.
    private func drainInbox() {
        let requests = withShared { shared -> [UpdateRequest] in
            shared.inboxIsQueued = false
            defer { shared.inbox.removeAll() }
            return shared.inbox
        }
        for request in requests {
            if case .transaction(let box, let update) = request {
                apply(box.transaction, update: update)
            } else {
                perform(
                    machinePointer.pointee.apply(request, defaultAnimated: animated),
                    forPlainRequest: request.isAnimatedWithoutTransaction ? true : nil)
            }
        }
        publishScheduled()
        withShared { shared in
            // Requests posted meanwhile keep the flag (and registered the storage for a turn of their own).
            if shared.inbox.isEmpty { cvu_flag_store_release(flags + Self.inboxFlag, false) }
        }
    }

    // MARK: Any thread

    /// Puts a request in the inbox, applied on the main thread at its next turn, in arrival order.
    /// Returns `false` when the context is gone (the request is dropped).
    @discardableResult
    func post(_ request: UpdateRequest) -> Bool {
        var accepted = true
        let needsTurn = withShared { shared -> Bool in
            if isCancelled {
                accepted = false
                return false
            }
            UpdateStateMachine.enqueue(request, into: &shared.inbox)
            shared.posted &+= 1
            cvu_flag_store_release(flags + Self.inboxFlag, true)
            if shared.inboxIsQueued { return false }
            shared.inboxIsQueued = true
            return true
        }
        // Reached only while the context lives or a caller holds the scheduler (see the header).
        if needsTurn { withScheduler { $0.schedule(self) } }
        return accepted
    }
}
