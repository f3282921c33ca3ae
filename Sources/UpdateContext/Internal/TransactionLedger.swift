import NotificationCoalescing

/// Where a context keeps what the transactions of its requests carry, beside the precedence rules: the
/// merged transaction of the pending requests, and the transaction of the delivery under way. Created on
/// the first transaction (kept with the context's other side objects, in its link), so that a context that
/// never sees one pays nothing for them: a flag byte says whether anything is pending.
///
/// It partitions exactly as the rules do: a delivery absorbs everything pending, except that the rules'
/// early non-animated flush absorbs what was pending *before* the animated request that caused it.
// @unchecked Sendable: every field is behind `state`'s lock.
final class TransactionLedger: @unchecked Sendable {
    private struct State {
        var pending: UpdateTransaction?
        var delivering: UpdateTransaction?
    }

    private let state = Locked(State())

    init() {}

    /// Merges `transaction` after what is pending.
    func merge(_ transaction: UpdateTransaction) {
        state.withLock { state in
            if state.pending == nil {
                state.pending = transaction
            } else {
                state.pending!.absorb(transaction)
            }
        }
    }

    /// An animated request without a transaction (`animated: true`): the last animated request's animation
    /// is the context's default one.
    func animatedRequestWithoutTransaction() {
        state.withLock { $0.pending?.animation = nil }
    }

    /// Takes what is pending (for a delivery, or to set it aside).
    func takePending() -> UpdateTransaction? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// Puts back what ``takePending()`` set aside, before what is pending now.
    func restore(_ saved: UpdateTransaction?) {
        guard let saved else { return }
        state.withLock { state in
            var merged = saved
            if let meanwhile = state.pending { merged.absorb(meanwhile) }
            state.pending = merged
        }
    }

    var delivering: UpdateTransaction? {
        get { state.withLock { $0.delivering } }
        set { state.withLock { $0.delivering = newValue } }
    }
}
