/// One request, as it waits in the inbox (made off the main thread, or while updaters run).
enum UpdateRequest: Equatable, Sendable {
    case setNeedsUpdate(Bool?)
    case update(Bool?)
    /// A delivery already decided (the last `resume()`, made while updaters ran): made as it is, forced
    /// only if it was.
    case deliver(Delivery)
    /// A request carrying a transaction (`update: true` for `update(transaction:)`): the storage applies
    /// it itself (``UpdateStorage/apply(_:update:)``), the machine never sees the box.
    case transaction(TransactionBox, update: Bool)
}

extension UpdateRequest {
    /// `animated: true` without a transaction: the delivery's animation becomes the default one.
    var isAnimatedWithoutTransaction: Bool {
        self == .setNeedsUpdate(true) || self == .update(true)
    }

    /// An explicit non-animated request (`animated: false`, or a transaction without an animation) that an
    /// animated one after it flushes early (an `update` delivers at once instead: it leaves nothing pending).
    var isNonAnimated: Bool {
        switch self {
        case .setNeedsUpdate(false?): true
        case .transaction(let box, false): !box.transaction.isAnimated
        case .setNeedsUpdate, .update, .deliver, .transaction: false
        }
    }
}

/// A transaction waiting in the inbox; equal only to itself (its completions are closures).
final class TransactionBox: Sendable, Equatable {
    let transaction: UpdateTransaction
    init(_ transaction: UpdateTransaction) { self.transaction = transaction }
    static func == (lhs: TransactionBox, rhs: TransactionBox) -> Bool { lhs === rhs }
}

/// What one delivery passes to the updaters.
struct Delivery: Equatable, Sendable {
    /// The flag every updater gets.
    var animated: Bool
    /// Whether it was asked for by `update()` (or a lifecycle refresh): it renders even what has not
    /// changed. End-of-cycle deliveries and early non-animated flushes are not forced.
    var isForced: Bool
    /// Whether it is the precedence rules' early non-animated flush (`false` then `true`): an animated
    /// delivery is scheduled right after it. Decided when the rules see the requests, in the order they
    /// are applied — which, for requests from other threads, can differ from the order of the changes.
    var isEarlyFlush = false
    /// Whether it is what an animating scope's entry flushed (recording names it so).
    var isScopeFlush = false
}
