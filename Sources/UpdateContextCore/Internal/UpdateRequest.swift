import CCoalescingSupport
import CoalescingRuntime

/// One request, as the rules see it (a transaction it carries rides beside it: its animation is the flag).
enum UpdateRequest: Equatable, Sendable {
    case setNeedsUpdate(Bool?)
    case update(Bool?)
}

extension UpdateRequest {
    /// `update()` (or `update(transaction:)`): delivered at once.
    var isUpdate: Bool {
        if case .update = self { true } else { false }
    }

    /// `animated: true`: without a transaction, the delivery's animation becomes the default one.
    var isAnimated: Bool {
        self == .setNeedsUpdate(true) || self == .update(true)
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

/// A request waiting in the inbox, with the transaction it carries and its note.
struct InboxEntry {
    var request: UpdateRequest
    var transaction: UpdateTransaction?
    var note: RequestNote

    /// The request, when it carries no transaction: what the inbox may merge with its neighbours.
    var plainRequest: UpdateRequest? { transaction == nil ? request : nil }
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
