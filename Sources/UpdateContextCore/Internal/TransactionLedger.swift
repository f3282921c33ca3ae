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
