import CCoalescingSupport
import CoalescingRuntime

/// One request, as it waits in the inbox (made off the main thread, or while updaters run).
enum UpdateRequest: Equatable, Sendable {
    case setNeedsUpdate(Bool?)
    case update(Bool?)
    /// A request carrying a transaction (`update: true` for `update(transaction:)`): the storage applies
    /// it itself (``UpdateStorage/apply(_:update:note:)``), the machine never sees the box.
    case transaction(TransactionBox, update: Bool)
}

extension UpdateRequest {
    /// The request the rules see for one carrying `transaction`: its animation is the flag.
    static func carrying(_ transaction: UpdateTransaction, update: Bool) -> UpdateRequest {
        update ? .update(transaction.isAnimated) : .setNeedsUpdate(transaction.isAnimated)
    }

    /// `update()` (or `update(transaction:)`): delivered at once.
    var isUpdate: Bool {
        switch self {
        case .update, .transaction(_, update: true): true
        case .setNeedsUpdate, .transaction: false
        }
    }

    /// `animated: true` without a transaction: the delivery's animation becomes the default one.
    var isAnimatedWithoutTransaction: Bool {
        switch self {
        case .setNeedsUpdate(true?), .update(true?): true
        case .setNeedsUpdate, .update, .transaction: false
        }
    }

    /// An explicit non-animated request (`animated: false`, or a transaction without an animation) that an
    /// animated one after it flushes early (an `update` delivers at once instead: it leaves nothing pending).
    var isNonAnimated: Bool {
        switch self {
        case .setNeedsUpdate(false?): true
        case .transaction(let box, false): !box.transaction.isAnimated
        case .setNeedsUpdate, .update, .transaction: false
        }
    }
}

/// What diagnostics count of a request: where it was made and how many requests it stands for (the inbox
/// merges those that change nothing). It is counted, and its site recorded, where it is *applied* on the main
/// thread — for the delivery that absorbs it: before the request, or, when the request makes the rules' early
/// flush, right after that flush began (the flush shows what came before it).
struct RequestNote {
    var site: RequestSite?
    var count: UInt32 = 1
    /// Whether the site is recorded (recording was on where the request was made).
    var isRecorded: Bool

    /// A note made where the request is made: its site is recorded while recording is on.
    init(_ site: RequestSite?) {
        self.site = site
        isRecorded = site != nil && cvu_diagnostics_is_recording()
    }

    /// This note for a request made on another thread than the one that applies it: a recorded site becomes
    /// its call site, taken here (it names this thread).
    func carried() -> RequestNote {
        guard isRecorded, let site else { return self }
        var note = self
        note.site = RequestSite(.recorded(site.callSite))
        return note
    }

    /// Another request merged into this one (it came later): counted, its site kept if this one has none.
    mutating func absorb(_ later: RequestNote) {
        count &+= later.count
        if !isRecorded, later.isRecorded { (site, isRecorded) = (later.site, true) }
    }
}

/// A request waiting in the inbox, with its note.
struct InboxEntry {
    var request: UpdateRequest
    var note: RequestNote
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
