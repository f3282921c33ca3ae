import CCoalescingSupport
import CoalescingRuntime
import Foundation

// The current transaction: the scope `withUpdateTransaction` makes, which requests made inside it carry, on
// its thread and in the tasks created in it.

extension UpdateTransaction {
    /// The scope that requests made now carry (see ``TransactionScope``).
    @TaskLocal static var scope: TransactionScope?

    /// The transaction of the current scope (read only while some scope value is alive).
    static var scoped: UpdateTransaction? { scope?.transaction }

    /// Whether a request with `flag` made now animates: its own flag, or with none the current scope's
    /// transaction (which, without an animation, is an explicit non-animated request); `nil` outside a scope.
    package static func effectiveFlag(of flag: Bool?) -> Bool? {
        flag ?? current.map(\.isAnimated)
    }

    /// The transaction that requests made now, on this thread or task, carry: the innermost
    /// ``withUpdateTransaction(_:_:)`` around the caller, or `nil`. Another thread does not see it; a task
    /// created inside the body (`Task { }`) does, as with any task-local value, for as long as it runs.
    public static var current: UpdateTransaction? {
        cvu_transaction_scopes_active() ? scoped : nil
    }
}

/// The value ``withUpdateTransaction(_:_:)`` makes current: its transaction, with its completions held
/// while the body runs (so that a completion waits for every request of the body, however many
/// deliveries they take).
///
/// Its lifetime is what the request fast path asks about: a global count of live scopes
/// (`cvu_transaction_scopes`) goes up when one is made and down when the last reference goes — at the end
/// of the body, or when the last `Task` created inside it (which copies the task-local value) ends — so
/// that a request reads the task-local value only while some scope value is alive, and a task created
/// in a scope still finds its transaction after the scope closed.
final class TransactionScope: Sendable {
    /// The scope's transaction, its completions claimed: held for as long as this object lives.
    let transaction: UpdateTransaction

    init(_ transaction: UpdateTransaction) {
        self.transaction = transaction
        cvu_transaction_scopes_add(1)
    }

    deinit {
        cvu_transaction_scopes_add(-1)
        // The scope's own hold goes with it: at the end of the body, or when the last task created in it ends
        // (it holds the completion while it runs). A completion no request holds is told now.
        transaction.releaseCompletions(nil)
    }
}

/// Runs `body` with `transaction` current on this thread (and task): every update request made inside —
/// `setNeedsUpdate`, `@NeedsUpdate` and `@ViewInvalidating` properties, changes to `@Observable`
/// properties that a tracked updater read, a Combine value sent to a trigger — carries it, merged with
/// the request's own: a request with no flag takes the transaction as it is; `animated: true` takes its
/// animation (or the default one); `animated: false` stays not animated but takes its values and
/// completions. Nested calls: the innermost transaction is current. Returns what `body` returns.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// let updateContext = ViewUpdatingContext()
/// withUpdateTransaction(UpdateTransaction(animation: .easeInOut(duration: 0.25))) {
///     updateContext.setNeedsUpdate()
/// }
/// ```
///
/// Each completion of `transaction` is called once, after the last delivery that shows a request made in
/// `body` (see ``UpdateTransaction/addCompletion(_:)``); when nothing requested, it is told
/// ``UpdateCompletion/dropped(_:)`` with ``UpdateCompletion/DropReason/nothingRequested`` as the scope ends. A
/// `Task` created in `body` carries the transaction too, and holds its completions while it runs: they are
/// told after the delivery that shows the task's requests (a task that never ends keeps them open). A request
/// with a transaction of its own made in `body` joins the scope: its own animation and values win, and the
/// scope's completions wait for it too. In a nested scope the innermost animation and values win, and the
/// enclosing scopes' completions also wait for the nested body's requests.
///
/// Entered with a transaction that animates or carries a completion, it first delivers what is pending on the
/// contexts whose scheduler turns on the calling thread — on the main thread, an app's contexts, including work
/// parked for a private run-loop mode — each as its end of cycle would (UIKit 26's `.flushUpdates`): the
/// changes `body` makes are shown by deliveries of their own, animated, and a change to an `@Observable` value
/// that a tracked updater read is reported in the scope — and waited for by its completion — whatever changed
/// earlier in the cycle — the contexts a turn under way on this thread has not reached yet included. What those
/// deliveries make pending on this thread (a parent's render pushing into a child) is delivered too, in rounds,
/// each context at most once per flush: what becomes pending again, a context's request of itself, and what
/// other threads ask meanwhile wait for the turn. (A context
/// whose updaters are running, or that is suspended, keeps what is pending; so does every context while the
/// thread's run loop runs a private mode: view updates never run there, and a tracked change after a plain
/// one is then shown by the next common pass, unanimated, its completion told it requested nothing. The
/// flush finds a scheduler through the calling thread's own list, which it joins when it turns, lists a
/// request, or gets a context made on this thread, and finds `.dispatchMain` in a main-queue block off the
/// main thread (under `dispatchMain()`): a
/// context made on another thread, whose scheduler has done none of these here yet, keeps what is pending
/// for its turn, and so does one of a custom scheduler whose turns move between threads.)
///
/// Any thread. Entered on another thread than a context's, it flushes nothing of that context: the requests
/// made in `body` wait in the context's inbox with the transaction, and the completions still run on the
/// main thread.
@discardableResult
public func withUpdateTransaction<Result>(_ transaction: UpdateTransaction, _ body: () throws -> Result) rethrows
    -> Result
{
    let current = UpdateTransaction.current.map { transaction.nested(in: $0) } ?? transaction
    // A scope that animates or completes first delivers what is pending (`.flushUpdates`), outside the scope:
    // a tracked change in the body is then heard, animates and joins the completion.
    // (The scope's own transaction decides: a nested scope without either does not flush for the outer one's.)
    if transaction.isAnimated || transaction.completionCount > 0 { AnimatedScopeFlush.flushPendingUpdates() }
    // The scope value holds the completions: as long as the body runs, and as long as any task created in it
    // runs (a task copies the task-local value).
    let scope = TransactionScope(current.claimingCompletions())
    return try UpdateTransaction.$scope.withValue(scope, operation: body)
}

/// ``withUpdateTransaction(_:_:)`` with a transaction that has `animation` (`nil`: explicitly not
/// animated), like SwiftUI's `withAnimation`.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// let updateContext = ViewUpdatingContext()
/// withUpdateAnimation(.spring(duration: 0.4, bounce: 0.3)) {
///     updateContext.setNeedsUpdate()
/// }
/// ```
@discardableResult
public func withUpdateAnimation<Result>(_ animation: UpdateAnimation? = .default, _ body: () throws -> Result)
    rethrows -> Result
{
    try withUpdateTransaction(UpdateTransaction(animation: animation), body)
}

/// What entering a `withUpdateTransaction` scope that animates or carries a completion does first, as UIKit
/// 26's `.flushUpdates` animation option does: every context whose scheduler turns on the calling thread
/// (waiting for the next turn, or parked for a private run-loop mode) delivers what is pending now, each as
/// its end of cycle would (a non-animated update without animation), so that the scope's changes
/// are shown by deliveries of their own — animated, carrying the scope's transaction — and a change to an
/// `@Observable` value that a tracked updater read is reported in the scope (Observation reports once per
/// tracking: an earlier change of the cycle would have spent it).
///
/// Not while the thread's run loop runs a private mode (a mode of the app's own): view updates never run there;
/// they wait for a common pass, and so does what the scope changes.
///
/// The schedulers are the calling thread's (``ThreadSchedulers``, which hangs off the thread's record: no
/// process-wide registry; and `.dispatchMain` in a main-queue block off the main thread); their own lists say which contexts wait for
/// a turn. Nothing pending costs a look at each of the thread's schedulers, and allocates nothing.
enum AnimatedScopeFlush {
    /// Delivers what is pending on the calling thread's schedulers (called as an animating scope begins).
    static func flushPendingUpdates() {
        var due = ThreadSchedulers.dueSchedulersOfCurrentThread
        guard !due.isEmpty else { return }
        // In rounds: first what waits now (a turn under way has not reached it, it is listed, or parked), then
        // what the round's deliveries listed on this thread (a parent's render pushing into a child, whose context
        // may have another of the thread's schedulers, idle when the scope began). Each context
        // once per flush (a list may hold one several times: asked from this thread and from others): what one
        // asks again, or asks of itself, waits for the turn; so do the later rounds' inbox arrivals (only the
        // first round applies a context's inbox). The rounds end: each flushes contexts no earlier one did.
        var seen = Set<ObjectIdentifier>()
        var round = due.flatMap { $0.waitingClients().map(\.client) }
        var isFirst = true
        while !round.isEmpty {
            for case let storage as UpdateStorage in round where seen.insert(ObjectIdentifier(storage)).inserted {
                storage.flushBeforeAnimatedScope(applyingInbox: isFirst)
            }
            isFirst = false
            due = ThreadSchedulers.dueSchedulersOfCurrentThread
            round = due.flatMap(\.listedOnItsThread).filter { !seen.contains(ObjectIdentifier($0)) }
        }
    }
}
