import CCoalescingSupport
import Foundation
import NotificationCoalescing

/// A key for a custom value carried by an ``UpdateTransaction`` (like SwiftUI's `TransactionKey`).
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// enum ScrollTarget: UpdateTransactionKey {
///     static let defaultValue: Int? = nil
/// }
/// var transaction = UpdateTransaction()
/// transaction[ScrollTarget.self] = 42
/// ```
public protocol UpdateTransactionKey {
    associatedtype Value: Sendable
    /// The value a transaction has for the key until one is set.
    static var defaultValue: Value { get }
}

/// How a change requested with a transaction ended, as its completions are told.
public enum UpdateCompletion: Sendable, Hashable {
    /// A delivery showed it: its updaters ran, and its animation, where an updater animated through the
    /// transaction, ended. `finished` is `false` when the platform says the animation was interrupted.
    case shown(finished: Bool)
    /// No delivery will show it.
    case dropped(UpdateCompletion.DropReason)

    /// Why a request was dropped.
    public enum DropReason: Sendable, Hashable {
        /// The context was released with the request pending.
        case contextReleased
        /// Nothing showed it: the delivery that absorbed it had no updater, or nothing requested an update
        /// with it (a scope whose body requested nothing, a `modify` that left the state equal).
        case noUpdaters
    }

    /// Whether a delivery showed the change.
    public var wasShown: Bool {
        if case .shown = self { return true }
        return false
    }
}

/// What a request says beyond "update": whether and how to animate, custom values, and what to run once
/// the change is on screen. SwiftUI's `Transaction` for coalesced view updates.
///
/// A request carries one (``ViewUpdatingContext/setNeedsUpdate(transaction:file:line:)``, or any request made
/// inside ``withUpdateTransaction(_:_:)``), and the delivery that absorbs it merges the transactions of
/// its requests: the precedence rules decide whether it animates (reading "has an animation" for
/// `animated: true`), the last animation among its animated requests is its animation, custom values
/// merge key by key (the last set wins), and every completion is called exactly once.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// var transaction = UpdateTransaction(animation: .spring(duration: 0.4, bounce: 0.2))
/// transaction.addCompletion { completion in
///     print("on screen:", completion.wasShown)
/// }
/// let updateContext = ViewUpdatingContext()
/// updateContext.setNeedsUpdate(transaction: transaction)
/// ```
///
/// `Sendable`: build it anywhere, request with it from any thread.
public struct UpdateTransaction: Sendable, CustomStringConvertible {
    /// The animation, `nil` for none. A transaction is an explicit request: without an animation it acts
    /// as `setNeedsUpdate(animated: false)`.
    public var animation: UpdateAnimation?

    /// Custom values by key (``UpdateTransactionKey``).
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// What runs once the change is shown or dropped, each in a box of its own that counts the requests
    /// carrying it: a transaction copied into several requests (``withUpdateTransaction(_:_:)``, a task
    /// created in its body, several contexts) has its completion called once, after the last of them.
    fileprivate(set) var completions: [CompletionBox] = []

    /// For the transaction a delivery hands its updaters: what ``animate(_:)`` tells when an animation it
    /// started ends, so that the completions wait for it.
    var group: CompletionGroup?

    /// A transaction with `animation` (`nil`: not animated).
    public init(animation: UpdateAnimation? = nil) {
        self.animation = animation
    }

    /// Whether it carries nothing but its animation (no values, no completions): kept as a field, so that
    /// the fast path of a repeated request reads one byte.
    private(set) var isPlain = true

    /// Whether it animates: `animation != nil`.
    public var isAnimated: Bool { animation != nil }

    /// The value for `key`, or its default value.
    public subscript<Key: UpdateTransactionKey>(key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set {
            values[ObjectIdentifier(key)] = newValue
            isPlain = false
        }
    }

    /// Adds a completion, called exactly once, on the main thread (it is `@MainActor`: UIKit code in it
    /// compiles as is), when no request carrying this transaction is pending any more:
    ///
    /// - ``UpdateCompletion/shown(finished:)`` once every delivery that absorbed such a request has run its
    ///   updaters, and the animations they ran through ``animate(_:)`` have ended — however many requests
    ///   and deliveries there were (an early non-animated flush and the animated delivery after it, several
    ///   contexts, a `Task` created inside ``withUpdateTransaction(_:_:)``);
    /// - ``UpdateCompletion/dropped(_:)`` when a context was released with such a request pending
    ///   (``UpdateCompletion/DropReason/contextReleased``), or when nothing showed it
    ///   (``UpdateCompletion/DropReason/noUpdaters``).
    ///
    /// A request made with the transaction after its completion ran carries the rest (the animation, the
    /// values) and not the completion: it is never called twice. Never under a lock: it may request
    /// another update, which is delivered in a later cycle.
    public mutating func addCompletion(_ completion: @escaping @MainActor @Sendable (UpdateCompletion) -> Void) {
        completions.append(CompletionBox(completion))
        isPlain = false
    }

    /// How many completions it carries.
    public var completionCount: Int { completions.count }

    /// Merges `later` (a request made after this transaction's) into this one: its animation when it has
    /// one, its values over these, its completions after these. Returns what it displaced — completions
    /// this one already carried (their extra hold, to release) and values replaced — for the caller to
    /// release outside its lock (a value's or a closure's deinit is user code).
    mutating func absorb(_ later: UpdateTransaction) -> Displaced {
        var displaced = Displaced()
        if let animation = later.animation { self.animation = animation }
        if !later.isPlain { isPlain = false }
        values.merge(later.values) { older, newer in
            displaced.values.append(older)
            return newer
        }
        for box in later.completions {
            if completions.contains(where: { $0 === box }) {
                displaced.holds.append(box)
            } else {
                completions.append(box)
            }
        }
        return displaced
    }

    /// What ``absorb(_:)`` took out of a transaction: release it after leaving the lock.
    struct Displaced {
        var values: [any Sendable] = []
        /// Completions carried twice: one hold each is given back (never the last: the merged transaction
        /// keeps one).
        var holds: [CompletionBox] = []

        /// Gives back the extra holds (no completion runs: the merged transaction still holds each).
        func release() {
            for box in holds { box.release(nil) }
        }
    }

    /// This transaction as a request with `flag` asks for it (inside ``withUpdateTransaction(_:_:)``): no
    /// flag takes it as it is; `true` keeps its animation or takes the default one; `false` drops the
    /// animation and keeps the rest.
    func applying(_ flag: Bool?) -> UpdateTransaction {
        var copy = self
        switch flag {
        case nil: break
        case true?: if copy.animation == nil { copy.animation = .default }
        case false?: copy.animation = nil
        }
        return copy
    }

    /// This transaction made current inside `outer`'s scope: its own animation (even none) and values win,
    /// and the enclosing scope's completions come along, so that they also wait for the requests made in
    /// the nested body (`withUpdateAnimation(.spring) { … }` inside a scope with a completion).
    func nested(in outer: UpdateTransaction) -> UpdateTransaction {
        var merged = self
        merged.values = outer.values.merging(values) { _, inner in inner }
        for box in outer.completions where !merged.completions.contains(where: { $0 === box }) {
            merged.completions.append(box)
        }
        merged.isPlain = merged.values.isEmpty && merged.completions.isEmpty
        return merged
    }

    /// This transaction as an explicit request made now carries it: inside ``withUpdateTransaction(_:_:)`` it
    /// joins the scope as a nested scope does (its own animation, even none, and values win; the scope's
    /// completions come along and wait for it too); elsewhere it is itself.
    func joiningCurrentScope() -> UpdateTransaction {
        guard let current = UpdateTransaction.current else { return self }
        return nested(in: current)
    }

    /// This transaction as a request carries it: each completion not yet called is held for the request
    /// (it runs only once no holder is left); those already called are left out, so a request made after
    /// the completion ran carries the rest of the transaction only. Any thread.
    func claimingCompletions() -> UpdateTransaction {
        guard !completions.isEmpty else { return self }
        var copy = self
        copy.completions = completions.filter { $0.hold() }
        if copy.completions.isEmpty && copy.values.isEmpty { copy.isPlain = true }
        return copy
    }

    /// Gives back the holds of a claimed transaction (see ``claimingCompletions()``), with what happened
    /// to the request: `nil` when it neither showed nor dropped anything (a scope's own hold). A
    /// completion whose last holder this was runs now on the main thread, or from the main queue.
    func releaseCompletions(_ outcome: UpdateCompletion?) {
        for box in completions { box.release(outcome) }
    }

    /// Tells every completion of this claimed transaction that its request was dropped (see
    /// ``releaseCompletions(_:)``).
    func tellDropped(_ reason: UpdateCompletion.DropReason) {
        releaseCompletions(.dropped(reason))
    }

    /// A transaction that never became a request (its context was already gone): claimed and dropped.
    func tellUnrequestedDropped(_ reason: UpdateCompletion.DropReason) {
        claimingCompletions().tellDropped(reason)
    }

    /// The same transaction without its completions: what the updaters of a delivery see (the completions
    /// belong to the delivery, which calls each once).
    var withoutCompletions: UpdateTransaction {
        var copy = self
        copy.completions = []
        copy.isPlain = copy.values.isEmpty
        return copy
    }

    public var description: String {
        var parts = [animation.map { "animation: \($0)" } ?? "not animated"]
        if !values.isEmpty { parts.append("\(values.count) value\(values.count == 1 ? "" : "s")") }
        if !completions.isEmpty { parts.append("\(completions.count) completion\(completions.count == 1 ? "" : "s")") }
        return "UpdateTransaction(\(parts.joined(separator: ", ")))"
    }

    // MARK: The current transaction

    /// The scope that requests made now carry (see ``TransactionScope``).
    @TaskLocal static var scope: TransactionScope?

    /// The transaction of the current scope (read only while some scope value is alive).
    static var scoped: UpdateTransaction? { scope?.transaction }

    /// Whether a request with `flag` made now animates: its own flag, or with none the current scope's
    /// transaction (which, without an animation, is an explicit non-animated request); `nil` outside a scope.
    static func effectiveFlag(of flag: Bool?) -> Bool? {
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
/// ``UpdateCompletion/dropped(_:)`` with ``UpdateCompletion/DropReason/noUpdaters`` as the scope ends. A
/// `Task` created in `body` carries the transaction too, and holds its completions while it runs: they are
/// told after the delivery that shows the task's requests (a task that never ends keeps them open). A request
/// with a transaction of its own made in `body` joins the scope: its own animation and values win, and the
/// scope's completions wait for it too. In a nested scope the innermost animation and values win, and the
/// enclosing scopes' completions also wait for the nested body's requests.
///
/// Entered on the main thread with a transaction that animates, it first delivers what is pending on that
/// thread's contexts, each as its end of cycle would (UIKit 26's `.flushUpdates`): the changes `body` makes
/// are shown by deliveries of their own, animated, and a change to an `@Observable` value that a tracked
/// updater read is reported in the scope whatever changed earlier in the cycle. (A context whose updaters are
/// running, or that is suspended, keeps what is pending; so do the contexts of a turn under way on this
/// thread that it has not reached yet.)
///
/// Any thread. On another thread than the main one nothing is flushed, the requests wait in the context's
/// inbox with the transaction, and the completions still run on the main thread.
@discardableResult
public func withUpdateTransaction<Result>(_ transaction: UpdateTransaction, _ body: () throws -> Result) rethrows
    -> Result
{
    let current = UpdateTransaction.current.map { transaction.nested(in: $0) } ?? transaction
    // An animating scope first delivers what is pending (`.flushUpdates`), outside the scope.
    if current.isAnimated { AnimatedScopeFlush.flushPendingUpdates() }
    // The scope value holds the completions: as long as the body runs, and as long as any task created in it
    // runs (a task copies the task-local value).
    return try UpdateTransaction.$scope.withValue(TransactionScope(current.claimingCompletions()), operation: body)
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

/// The completions of one delivery's transaction, as one holder: released once the delivery's updaters
/// have run and every animation started through ``UpdateTransaction/animate(_:)`` has ended. Main thread.
// @unchecked Sendable: it travels inside `UpdateTransaction` values, but it is only touched on the main
// thread (the scheduler's thread), where deliveries run and platform animations complete.
final class CompletionGroup: @unchecked Sendable {
    private var completions: [CompletionBox]
    private var outstanding = 1  // the delivery itself, until its updaters have run
    private var finished = true

    init(_ completions: [CompletionBox]) {
        self.completions = completions
    }

    /// An animation started.
    func enter() {
        outstanding += 1
    }

    /// An animation (or the delivery's updaters) ended; the last one releases the completions as shown.
    func leave(finished: Bool = true) {
        if !finished { self.finished = false }
        outstanding -= 1
        if outstanding == 0 { complete(.shown(finished: self.finished)) }
    }

    /// Releases each completion's hold once with `completion` (the delivery was dropped, or everything
    /// ended); a completion with no other holder runs now.
    func complete(_ completion: UpdateCompletion) {
        let boxes = completions
        completions = []
        for box in boxes { box.release(completion, endsDelivery: true) }
    }
}

/// One transaction requested again and again by a subscription (an async sequence's elements): its
/// completions are renewable copies (``CompletionBox/init(renewing:)``), each called once
/// per delivery that shows one or more of those requests — decided by the delivery, on the main thread, not
/// by when an element's request was made: a request still on its way when a delivery shows the ones before
/// it is shown, and told, by a delivery of its own.
final class CompletionRenewal: Sendable {
    private let transaction: UpdateTransaction

    init(_ transaction: UpdateTransaction) {
        var renewable = transaction
        renewable.completions = transaction.completions.map { CompletionBox(renewing: $0) }
        self.transaction = renewable
    }

    /// Requests on `link` with the transaction (and so with the renewable completions).
    func request(on link: UpdateLink, site: RequestSite) {
        link.setNeedsUpdate(transaction: transaction, site: site)
    }
}

/// One completion, with an identity (see ``UpdateTransaction/completions``) and a count of the requests
/// that hold it: it runs once, when the last holder lets go, with what their requests came to.
///
/// A renewable one (a subscription's, ``CompletionRenewal``) is never spent: it runs once per delivery that
/// shows (or drops for want of updaters) a request holding it, as that delivery ends, and the requests that
/// still hold it — made meanwhile, waiting for a later delivery — start its next run; a request dropped with
/// its context tells it once the last holder lets go.
final class CompletionBox: Sendable {
    private let call: @MainActor @Sendable (UpdateCompletion) -> Void
    private let renews: Bool

    private struct State {
        /// Requests (and scopes) holding it.
        var holds = 0
        /// Whether it ran (or is about to): no new holder is accepted. Never for a renewable box.
        var isSpent = false
        /// What the holders' requests came to (since its last run, for a renewable box).
        var shown = false
        var finished = true
        var released = false
        var noUpdaters = false
        /// A renewable box was told its context went: it is not told so again (a request racing the release
        /// may still drop after that).
        var toldReleased = false

        /// A renewable box's run that no delivery ends: once no holder is left, its requests' drop (once for
        /// the context's release), and a fresh start.
        mutating func renewedDrop() -> [UpdateCompletion] {
            guard holds == 0, released || noUpdaters || shown else { return [] }
            let outcome = outcome()
            if outcome == .dropped(.contextReleased) {
                if toldReleased { return [] }
                toldReleased = true
            }
            return [outcome]
        }

        /// What the holders' requests came to, and a fresh start for a renewable box's next run.
        mutating func outcome() -> UpdateCompletion {
            defer { (shown, finished, released, noUpdaters) = (false, true, false, false) }
            if released { return .dropped(.contextReleased) }
            if shown { return .shown(finished: finished) }
            return .dropped(.noUpdaters)
        }
    }

    private let state = Locked(State())

    init(_ call: @escaping @MainActor @Sendable (UpdateCompletion) -> Void) {
        self.call = call
        renews = false
    }

    /// A renewable box for the same completion (see ``CompletionRenewal``).
    init(renewing box: CompletionBox) {
        call = box.call
        renews = true
    }

    /// Takes a hold for a request; `false` when the completion has run (the request goes without it).
    func hold() -> Bool {
        state.withLock { state in
            if state.isSpent { return false }
            state.holds += 1
            return true
        }
    }

    /// Gives a hold back with what its request came to (`nil`: nothing, a scope's hold); the last one
    /// calls the completion: a release of a context wins (a change it held was never shown), then a
    /// delivery that showed it, then "nothing showed it". `endsDelivery`: the hold was a delivery's
    /// (``CompletionGroup``), which runs a renewable box at once.
    func release(_ outcome: UpdateCompletion?, endsDelivery: Bool = false) {
        let calls = state.withLock { state -> [UpdateCompletion] in
            precondition(state.holds > 0, "CompletionBox: released more times than held")
            state.holds -= 1
            if renews, endsDelivery, let outcome, outcome != .dropped(.contextReleased) {
                // A delivery that showed it (or had no updater) runs it now, for that delivery alone; what
                // other holders' requests came to meanwhile (dropped with their context) is their own run's,
                // told once no holder is left.
                return [outcome] + state.renewedDrop()
            }
            switch outcome {
            case .shown(let finished)?:
                state.shown = true
                if !finished { state.finished = false }
            case .dropped(.contextReleased)?: state.released = true
            case .dropped(.noUpdaters)?: state.noUpdaters = true
            case nil: break
            }
            if renews { return state.renewedDrop() }
            guard state.holds == 0, !state.isSpent else { return [] }
            state.isSpent = true
            return [state.outcome()]
        }
        guard !calls.isEmpty else { return }
        let call = self.call
        if MainActorPlace.isCurrent {
            MainActor.assumeIsolated { for outcome in calls { call(outcome) } }
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated { for outcome in calls { call(outcome) } } }
        }
    }
}
