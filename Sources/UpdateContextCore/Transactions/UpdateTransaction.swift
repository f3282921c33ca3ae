import CCoalescingSupport
import CoalescingRuntime
import Foundation

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
    package var group: CompletionGroup?

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
    ///   (``UpdateCompletion/DropReason/contextReleased``), when the delivery that absorbed it had no updater
    ///   (``UpdateCompletion/DropReason/noUpdaters``), or when nothing requested an update with it
    ///   (``UpdateCompletion/DropReason/nothingRequested``).
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
    package func tellUnrequestedDropped(_ reason: UpdateCompletion.DropReason) {
        claimingCompletions().tellDropped(reason)
    }

    /// The same transaction with renewable copies of its completions: for one transaction requested again and
    /// again by a subscription (an async sequence's elements), each completion is called once per delivery that
    /// shows one or more of those requests — decided by the delivery, on the main thread, not by when an
    /// element's request was made: a request still on its way when a delivery shows the ones before it is shown,
    /// and told, by a delivery of its own.
    package var withRenewableCompletions: UpdateTransaction {
        var copy = self
        copy.completions = completions.map { CompletionBox(renewing: $0) }
        return copy
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
}
