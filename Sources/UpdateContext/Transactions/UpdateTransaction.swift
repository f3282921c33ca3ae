import CCoalescingSupport
import Foundation

/// A key for a custom value carried by an ``UpdateTransaction`` (like SwiftUI's `TransactionKey`).
///
/// ```swift
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
        /// The delivery that absorbed it had no updater to show it.
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
/// A request carries one (``ViewUpdatingContext/setNeedsUpdate(transaction:)``, or any request made
/// inside ``withUpdateTransaction(_:_:)``), and the delivery that absorbs it merges the transactions of
/// its requests: the precedence rules decide whether it animates (reading "has an animation" for
/// `animated: true`), the last animation among its animated requests is its animation, custom values
/// merge key by key (the last set wins), and every completion is called exactly once.
///
/// ```swift
/// var transaction = UpdateTransaction(animation: .spring(duration: 0.4, bounce: 0.2))
/// transaction.addCompletion { completion in
///     print("on screen:", completion.wasShown)
/// }
/// let context = ViewUpdatingContext()
/// context.setNeedsUpdate(transaction: transaction)
/// ```
///
/// `Sendable`: build it anywhere, request with it from any thread.
public struct UpdateTransaction: Sendable, CustomStringConvertible {
    /// The animation, `nil` for none. A transaction is an explicit request: without an animation it acts
    /// as `setNeedsUpdate(animated: false)`.
    public var animation: UpdateAnimation?

    /// Custom values by key (``UpdateTransactionKey``).
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// What runs once the change is shown or dropped, each in a box of its own: a transaction copied
    /// into several requests of one delivery (``withUpdateTransaction(_:_:)``) has its completion called
    /// once for that delivery.
    private(set) var completions: [CompletionBox] = []

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

    /// Adds a completion: called exactly once, on the main thread, when the change this transaction
    /// requests is shown (after the delivery's updaters ran, and after the animation an updater ran
    /// through ``animate(_:)`` ended) or dropped (see ``UpdateCompletion``). Never under a lock: it may
    /// request another update, which is delivered in a later cycle.
    public mutating func addCompletion(_ completion: @escaping @Sendable (UpdateCompletion) -> Void) {
        completions.append(CompletionBox(completion))
        isPlain = false
    }

    /// How many completions it carries.
    public var completionCount: Int { completions.count }

    /// Merges `later` (a request made after this transaction's) into this one: its animation when it has
    /// one, its values over these, its completions after these.
    mutating func absorb(_ later: UpdateTransaction) {
        if let animation = later.animation { self.animation = animation }
        if !later.isPlain { isPlain = false }
        values.merge(later.values) { _, newer in newer }
        for box in later.completions where !completions.contains(where: { $0 === box }) {
            completions.append(box)
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

    /// Tells every completion that the request was dropped: at once when the caller is on its context's
    /// scheduler thread (the main thread), otherwise from the main queue.
    func tellDropped(_ reason: UpdateCompletion.DropReason, onThisThread: Bool) {
        guard !completions.isEmpty else { return }
        let group = CompletionGroup(completions)
        if onThisThread {
            group.complete(.dropped(reason))
        } else {
            DispatchQueue.main.async { group.complete(.dropped(reason)) }
        }
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

    @TaskLocal static var scoped: UpdateTransaction?

    /// The transaction that requests made now, on this thread or task, carry: the innermost
    /// ``withUpdateTransaction(_:_:)`` around the caller, or `nil`. Another thread does not see it; a task
    /// created inside the body (`Task { }`) does, as with any task-local value.
    public static var current: UpdateTransaction? {
        cvu_transaction_scopes_active() ? scoped : nil
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
/// let context = ViewUpdatingContext()
/// withUpdateTransaction(UpdateTransaction(animation: .easeInOut(duration: 0.25))) {
///     context.setNeedsUpdate()
/// }
/// ```
///
/// A completion of `transaction` is called once per request that carries it.
@discardableResult
public func withUpdateTransaction<Result>(_ transaction: UpdateTransaction, _ body: () throws -> Result) rethrows
    -> Result
{
    cvu_transaction_scopes_add(1)
    defer { cvu_transaction_scopes_add(-1) }
    return try UpdateTransaction.$scoped.withValue(transaction, operation: body)
}

/// ``withUpdateTransaction(_:_:)`` with a transaction that has `animation` (`nil`: explicitly not
/// animated), like SwiftUI's `withAnimation`.
///
/// ```swift
/// let context = ViewUpdatingContext()
/// withUpdateAnimation(.spring(duration: 0.4, bounce: 0.3)) {
///     context.setNeedsUpdate()
/// }
/// ```
@discardableResult
public func withUpdateAnimation<Result>(_ animation: UpdateAnimation? = .default, _ body: () throws -> Result)
    rethrows -> Result
{
    try withUpdateTransaction(UpdateTransaction(animation: animation), body)
}

/// The completions of one delivery's transaction, called once the delivery's updaters have run and every
/// animation started through ``UpdateTransaction/animate(_:)`` has ended. Main thread.
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

    /// An animation (or the delivery's updaters) ended; the last one calls the completions.
    func leave(finished: Bool = true) {
        if !finished { self.finished = false }
        outstanding -= 1
        if outstanding == 0 { complete(.shown(finished: self.finished)) }
    }

    /// Calls every completion once with `completion` (the delivery was dropped, or everything ended).
    func complete(_ completion: UpdateCompletion) {
        let boxes = completions
        completions = []
        for box in boxes { box.call(completion) }
    }
}

/// One completion, with an identity (see ``UpdateTransaction/completions``).
final class CompletionBox: Sendable {
    let call: @Sendable (UpdateCompletion) -> Void
    init(_ call: @escaping @Sendable (UpdateCompletion) -> Void) { self.call = call }
}
