import CCoalescingSupport
import Foundation

/// The storage of a ``NotificationCoalescingContext``: its held notifications and its place in the
/// scheduler. The scheduler holds this, never the context, so releasing the context frees it at once.
final class CoalescingCore: TurnClient, Sendable {
    private struct State {
        var queue = PendingQueue()
        /// Whether the scheduler holds this core (waiting for a turn, or parked for another mode).
        var isQueued = false
        /// Whether the core is parked: it will be called at every turn but has not asked for one.
        var isParked = false
        var isCancelled = false
        /// Whether a batch is posting (its handlers are running), and whether a nested pass inside one of them
        /// called the core meanwhile: it posts nothing then, and the batch's end asks for the next turn.
        var isPosting = false
        var missedTurn = false
        var nextUnmatchedSender: UInt64 = 0
        /// When a slow turn's report last named the queue (its scheduler's clock), if one did.
        var namedAt: UInt64?
    }

    let center: NotificationCenter
    /// Not retained: the context holds the scheduler, and the scheduler holds this core while work is
    /// pending. A strong reference here would make a cycle that keeps both (and a background thread's run
    /// loop) alive after the context is released with work pending. Only the context, and the scheduler's own
    /// turns, use it.
    unowned(unsafe) let scheduler: CoalescingScheduler
    private let state = Locked(State())
    /// What diagnostics call the context.
    let label: DiagnosticLabel

    init(label: DiagnosticLabel, center: NotificationCenter, scheduler: CoalescingScheduler) {
        self.label = label
        self.center = center
        self.scheduler = scheduler
    }

    deinit {
        label.release()
    }

    var diagnosticLabel: DiagnosticLabel? { label }

    /// What a slow turn's report calls the queue, at most once a second.
    func nameForSlowReport(at now: UInt64) -> String? {
        let named = state.withLock { state -> Bool in
            if let last = state.namedAt, now &- last < UpdateDiagnostics.reportInterval { return false }
            state.namedAt = now
            return true
        }
        return named ? label.string : nil
    }

    /// Whether a turn would still post something (a `.now` post may have removed what was pending).
    var hasWorkForTurn: Bool {
        state.withLock { !$0.isCancelled && !$0.queue.isEmpty }
    }

    /// The names of the held notifications, in posting order, and the modes they wait for.
    var pendingSummary: (names: [Notification.Name], modes: [RunLoop.Mode]) {
        state.withLock { ($0.queue.names, $0.queue.modes) }
    }

    var pendingCount: Int {
        state.withLock { $0.queue.count }
    }

    /// Holds `notification` for a later turn, replacing what it coalesces with.
    func hold(
        _ notification: Notification,
        style: PendingStyle,
        mask: NotificationQueue.NotificationCoalescing,
        modes: [RunLoop.Mode]
    ) {
        if modes != Self.defaultModes { scheduler.prepare(modes: modes) }
        // What coalescing replaces is released after the lock: a notification's `object` and `userInfo`
        // values are the user's, and their deinit may call back into this context.
        var replaced: [PendingNotification] = []
        let ask = state.withLock { state -> TurnAsk in
            if state.isCancelled { return .nothing }
            let sender = SenderKey(notification.object) {
                state.nextUnmatchedSender &+= 1
                return state.nextUnmatchedSender
            }
            state.queue.removeMatching(name: notification.name, sender: sender, mask: mask, into: &replaced)
            state.queue.append(
                PendingNotification(notification: notification, style: style, modes: modes, sender: sender))
            return Self.askForTurn(&state)
        }
        replaced.removeAll()
        perform(ask)
    }

    /// What a hold asks of the scheduler.
    private enum TurnAsk { case nothing, schedule, turnOnly }

    /// After a hold, under the lock: whether to ask the scheduler for a turn (the first work) or only to
    /// wake a parked core.
    private static func askForTurn(_ state: inout State) -> TurnAsk {
        if !state.isQueued {
            state.isQueued = true
            return .schedule
        }
        if state.isParked {
            state.isParked = false
            return .turnOnly
        }
        return .nothing
    }

    /// Asks the scheduler, outside the lock.
    private func perform(_ ask: TurnAsk) {
        switch ask {
        case .nothing: break
        case .schedule: scheduler.schedule(self)
        case .turnOnly: scheduler.schedule(nil)
        }
    }

    /// Holds a typed message for a later turn, in the default mode, replacing the one held for its
    /// (type, subject) in place. The path of an enqueue that is already pending: one lock, one hash of two
    /// words, a swap.
    func hold(message post: inout any MessagePosting, key: MessageKey, subject: AnyObject?) {
        // What coalescing replaces (the user's message) comes back in `post`, released by the caller, after
        // the lock.
        let ask = state.withLock { state -> TurnAsk in
            if state.isCancelled { return .nothing }
            state.queue.holdMessage(&post, key: key, subject: subject) {
                PendingNotification(
                    notification: Notification(name: Self.messagePlaceholder), style: .asap,
                    modes: Self.defaultModes, sender: .none, messageKey: key)
            }
            return Self.askForTurn(&state)
        }
        perform(ask)
    }

    /// What stands in for a held message's notification (never posted).
    private static let messagePlaceholder = Notification.Name("NotificationCoalescing.message")

    /// Removes held notifications that `notification` matches under `mask` (before a `.now` post).
    func removeMatching(_ notification: Notification, mask: NotificationQueue.NotificationCoalescing) {
        var removed: [PendingNotification] = []
        state.withLock { state in
            let sender = SenderKey(notification.object) { .max }
            state.queue.removeMatching(name: notification.name, sender: sender, mask: mask, into: &removed)
        }
        removed.removeAll()  // released outside the lock (see `hold`)
    }

    func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]? {
        let taken = state.withLock { state -> (batch: [PendingNotification], parks: Bool)? in
            // A nested pass inside one of this core's handlers: posting now would post inside the handler,
            // before the rest of its batch. The batch's end asks for a turn for what waits.
            if state.isPosting {
                state.missedTurn = true
                return nil
            }
            let batch = state.queue.take { turn.admits($0.modes) }
            state.isQueued = !state.queue.isEmpty
            state.isParked = state.isQueued
            state.isPosting = true
            return (batch, state.isQueued)
        }
        guard let (batch, parks) = taken else { return nil }
        for pending in batch {
            // A context released (on another thread) while this batch posts stops posting at once.
            if state.withLock({ $0.isCancelled }) { break }
            if let message = pending.message {
                message.post.post(to: center, subject: message.subject)
            } else {
                center.post(pending.notification)
            }
        }
        // Parked for what remains, as it is now that the batch has posted: a handler's enqueue only asked for a
        // turn (this core counts as parked), which a nested loop in the handler may have used without this core
        // posting — the modes it waits for must include what that enqueue added, and a turn must come for it.
        let (remains, asks) = state.withLock { state -> ([RunLoop.Mode]?, Bool) in
            // A call missed while posting, or a handler's enqueue that only asked for a turn (the core counted as
            // parked): a nested loop in the handler may have used that turn up. Ask again (one wake-up if not).
            let asks = state.missedTurn || (parks && !state.isParked)
            (state.isPosting, state.missedTurn) = (false, false)
            guard parks || asks else { return (nil, false) }
            guard !state.isCancelled, !state.queue.isEmpty else {
                state.isQueued = false
                state.isParked = false
                return (nil, false)
            }
            (state.isQueued, state.isParked) = (true, true)
            return (state.queue.modes, asks)
        }
        if asks { scheduler.schedule(nil) }
        return remains
    }

    /// Called when the context is released: drops everything held; nothing more will post.
    func cancel() {
        let dropped = state.withLock { state -> PendingQueue in
            state.isCancelled = true
            defer { state.queue = PendingQueue() }
            return state.queue
        }
        // Release the held notifications (and the objects they carry) outside the lock.
        _ = dropped
    }

    static let defaultModes: [RunLoop.Mode] = [.default]
}
