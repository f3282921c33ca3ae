import CCoalescingSupport
import CoalescingRuntime
import Foundation

// What requests with a transaction keep beside the rules, and the transaction of each delivery: a payload
// (`TransactionLedger`) that a context has only once it has seen a transaction. The requests themselves are
// applied with the others (`UpdateStorage.swift`).
extension UpdateStorage {
    /// Whether the ledger holds a pending transaction (main thread).
    var hasPendingTransaction: Bool { machine.hasPendingTransaction }

    /// The ledger, created on first use: kept in the shared state (where a release on any thread finds it),
    /// and by the machine for the main thread. Main thread.
    var ledger: TransactionLedger {
        if let ledger = machine.ledger { return ledger }
        let ledger = withShared { shared in
            if let ledger = shared.ledger { return ledger }
            let ledger = TransactionLedger()
            shared.ledger = ledger
            return ledger
        }
        machine.ledger = ledger
        return ledger
    }

    /// Merges `transaction` into the pending one (after it) unless the context is gone: the check and the merge are one step under the lock that ``cancel()`` marks the context gone
    /// and takes the pending transaction under. Returns `false` (keeping nothing) when it is gone.
    private func merge(_ transaction: UpdateTransaction) -> Bool {
        let ledger = self.ledger
        ledger.repeatAnimation = nil  // what is pending changes: the caller says if it is a repeat
        let displaced = withShared { _ -> UpdateTransaction.Displaced? in
            if isCancelled { return nil }
            guard let pending = ledger.pending else {
                ledger.pending = transaction
                return UpdateTransaction.Displaced()
            }
            var merged = pending
            let displaced = merged.absorb(transaction)
            ledger.pending = merged
            return displaced
        }
        // Outside the lock: an extra hold given back, and replaced values released (user deinits).
        displaced?.release()
        return displaced != nil
    }

    /// Takes what is pending, for a delivery. Main thread.
    private func takePending() -> UpdateTransaction? {
        let ledger = self.ledger
        return withShared { _ in
            defer { ledger.pending = nil }
            return ledger.pending
        }
    }

    /// What a request keeps beside the rules: its `transaction`, merged into the pending one; an animated one
    /// without a transaction makes the pending transaction's animation the default one (the last animated
    /// request's). `false` when the context is gone (the transaction was told so).
    @discardableResult
    func keep(_ transaction: UpdateTransaction?, for request: UpdateRequest) -> Bool {
        if let transaction { return keepPending(transaction) }
        if hasPendingTransaction && request.isAnimated {
            let ledger = self.ledger
            ledger.repeatAnimation = nil
            withShared { _ in ledger.pending?.animation = nil }
        }
        return true
    }

    /// After a request with `transaction` was carried out: the fast path's key says what the pending
    /// transaction's animation is, when a repeat of it would change nothing, or nothing.
    func noteRepeat(of transaction: UpdateTransaction, for request: UpdateRequest) {
        let repeats = !request.isUpdate && transaction.isPlain && hasPendingTransaction && machine.isNoOp(true)
        ledger.repeatAnimation = repeats ? transaction.animation : nil
    }

    /// Merges `transaction` into the pending one; when the context is gone (released
    /// by an updater, or on another thread racing this one), tells it so instead and returns `false`.
    @discardableResult
    private func keepPending(_ transaction: UpdateTransaction) -> Bool {
        guard merge(transaction) else {
            drop(transaction, .contextReleased)
            return false
        }
        machine.hasPendingTransaction = true
        return true
    }

    /// The start of a delivery: the transaction it absorbs (everything pending), made the one its updaters
    /// see, with its animation as the delivery's flag says. `nil` when no transaction is pending.
    @inline(__always)
    func beginTransaction(of delivery: Delivery) -> CompletionGroup? {
        hasPendingTransaction ? beginPendingTransaction(of: delivery) : nil
    }

    private func beginPendingTransaction(of delivery: Delivery) -> CompletionGroup? {
        machine.ledger?.repeatAnimation = nil
        machine.hasPendingTransaction = false
        guard var transaction = takePending() else { return nil }
        transaction.animation = delivery.animated ? (transaction.animation ?? .default) : nil
        let group = CompletionGroup(transaction.completions)
        var seen = transaction.withoutCompletions
        seen.group = group
        ledger.delivering = seen
        return group
    }

    /// The end of a delivery's updaters: its completions run now, or once the animations that updaters
    /// started through the transaction end; with no updater to show it, the request was dropped.
    func endTransaction(_ group: CompletionGroup, hadUpdaters: Bool) {
        ledger.delivering = nil
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
        machine.ledger?.delivering ?? UpdateTransaction(animation: animated ? .default : nil)
    }

    /// The transaction of the delivery under way (``deliveryTransaction(animated:)``), if updaters are running:
    /// `nil` elsewhere, and on another thread.
    var transactionUnderWay: UpdateTransaction? {
        guard isOnSchedulerThread, let delivery = machine.delivering else { return nil }
        return deliveryTransaction(animated: delivery.animated)
    }

    /// The request carrying `transaction` (claimed) was dropped: its completions are told (on the main
    /// thread) once no other request holds them.
    func drop(_ transaction: UpdateTransaction, _ reason: UpdateCompletion.DropReason) {
        transaction.tellDropped(reason)
    }

    /// What the context held when it went (any thread, after it was marked gone): the pending transaction
    /// and those waiting in the inbox, taken under the lock that marked it gone (see ``merge(_:)``).
    func dropTransactions(inbox: [InboxEntry], pending: UpdateTransaction?) {
        for case let transaction? in inbox.map(\.transaction) { drop(transaction, .contextReleased) }
        if let pending { drop(pending, .contextReleased) }
    }
}

/// Where a context keeps what the transactions of its requests carry, beside the state machine: the merged
/// transaction of the pending requests, and the transaction of the delivery under way. Created on the
/// first transaction (`Shared.ledger`, and the machine's `ledger` for the main thread), so that a context
/// that never sees one pays nothing for them: a flag byte says whether anything is pending.
///
/// It partitions exactly as the rules do: a delivery absorbs everything pending, except that the rules'
/// early non-animated flush absorbs what was pending *before* the animated request that caused it.
///
/// The fast path of a repeated plain transaction reads ``repeatAnimation``: the animation of the last plain
/// transaction (an animation, nothing else) merged while nothing else changed what is pending — a request
/// repeating it on a dirty context changes nothing.
// @unchecked Sendable: `pending` is read and written only under its storage's lock (a release on another
// thread takes it there); `delivering` and `repeatAnimation` only on the main thread (the scheduler's).
final class TransactionLedger: @unchecked Sendable {
    var pending: UpdateTransaction?
    var delivering: UpdateTransaction?
    var repeatAnimation: UpdateAnimation?
}
