#if canImport(Observation)
import CCoalescingSupport
import NotificationCoalescing
import Observation

// One tracking of a tracked updater (a delivery's), how it is retired, and the sentinel that retires it.
//
// Observation cannot cancel a tracking: it keeps its registrations until something it read changes, then
// reports once and removes them all. So every tracking also reads a slot of its updater's sentinel, a slot of
// its own (no other live tracking of that updater reads it), and changing that slot retires it. And Observation
// merges a tracking installed inside another's closure into the outer one (an updater that delivers another
// tracked context at once): the outer tracking reads the inner one's slot too, so changing that slot while the
// outer tracking is live would fire it — taken for no change at all, it would be delivered again to track
// again, and a tracking it keeps for write-backs would go deaf. A run delivered inside another tracked run
// (its host) is therefore retired only once its host has been retired, and with it.

/// One delivery's tracking: its generation, its sentinel slot, and the tracked run it was delivered inside.
final class TrackedRun: @unchecked Sendable {
    // @unchecked Sendable: `host`, `retired` and `waiting` are read and written under `TrackedRun.graph` only;
    // the rest is immutable.
    let generation: UInt64
    let slot: Int
    let sentinel: any TrackingSentinelProtocol
    /// The innermost tracked run on this thread when this one was delivered, whose tracking merged this one's
    /// (nil once retired).
    private var host: TrackedRun?
    private var retired = false
    /// Runs delivered inside this one, whose retirement waits for this one's.
    private var waiting: [TrackedRun] = []

    private static let graph = Locked(())

    init(generation: UInt64, slot: Int, sentinel: any TrackingSentinelProtocol, host: TrackedRun?) {
        self.generation = generation
        self.slot = slot
        self.sentinel = sentinel
        self.host = host
    }

    /// The innermost tracked run under way on this thread, if any.
    static var current: TrackedRun? {
        cvu_tracked_run().map { Unmanaged<TrackedRun>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with this run as the innermost tracked run on this thread.
    func whileCurrent(_ body: () -> Void) {
        let outer = cvu_set_tracked_run(Unmanaged.passUnretained(self).toOpaque())
        defer { _ = cvu_set_tracked_run(outer) }
        body()
    }

    /// Retires this run's tracking — now, or, when its host has not been retired yet, with its host — and then
    /// the runs that waited for it. `changing`: whether its slot still needs changing (false when its tracking
    /// fired, and so removed its registrations; the slot is freed all the same). Any thread; outside every lock.
    func retire(changing: Bool = true) {
        // The common case — no host, nothing waiting — allocates nothing.
        guard var due = retireAlone(changing: changing) else { return }
        while let run = due.popLast() {
            if let ready = run.retireAlone(changing: true) { due += ready }
        }
    }

    /// Retires this run alone, unless its host is live (it then waits for it, and this returns nil): returns
    /// the runs that waited for this one, now free to be retired.
    private func retireAlone(changing: Bool) -> [TrackedRun]? {
        let ready: [TrackedRun]? = Self.graph.withLock { _ in
            if retired { return nil }
            if let host, !host.retired {
                host.waiting.append(self)
                return nil
            }
            retired = true
            host = nil
            defer { waiting = [] }
            return waiting
        }
        guard let ready else { return nil }
        sentinel.retire(slot: slot, changing: changing)
        return ready
    }
}

/// The sentinel as the bookkeeping holds it (a stored property cannot have a newer type than its class's
/// availability).
protocol TrackingSentinelProtocol: Sendable {
    /// A slot no live tracking of this updater reads.
    func takeSlot() -> Int
    /// Changes `slot` (when `changing`), which fires and so removes the trackings that read it, then frees it.
    func retire(slot: Int, changing: Bool)
}

/// Properties of the updater's own, one per live tracking (a slot): every tracking reads its own, so that
/// changing it fires (and so removes) that tracking alone — and the trackings that merged it. Nothing is
/// stored: a change is Observation's `willSet` and `didSet` with no mutation between, safe from any thread.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
final class TrackingSentinel: Observable, TrackingSentinelProtocol, Sendable {
    private let registrar = ObservationRegistrar()
    /// Free slots below `next`, and the next slot never used.
    private let slots = Locked((free: [Int](), next: 0))

    subscript(slot slot: Int) -> Void { () }

    /// The first slots' key paths, made once (an updater uses two, three with a tracked child delivered twice
    /// in one run); more are made when needed.
    private static let firstKeyPaths: [KeyPath<TrackingSentinel, Void> & Sendable] = (0..<8).map { \.[slot: $0] }

    private static func keyPath(_ slot: Int) -> KeyPath<TrackingSentinel, Void> & Sendable {
        slot < firstKeyPaths.count ? firstKeyPaths[slot] : \.[slot: slot]
    }

    func takeSlot() -> Int {
        slots.withLock { slots in
            if let slot = slots.free.popLast() { return slot }
            slots.next += 1
            return slots.next - 1
        }
    }

    func read(_ slot: Int) {
        registrar.access(self, keyPath: Self.keyPath(slot))
    }

    /// What `cvu_retiring_sentinel()` holds while this sentinel changes.
    var identity: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// Changes one slot, marked on this thread as this sentinel's (see `cvu_retiring_sentinel`): the tracking
    /// it fires knows it was retired, not changed; then the slot is free for another tracking.
    func retire(slot: Int, changing: Bool) {
        if changing {
            let before = cvu_set_retiring_sentinel(identity)
            registrar.withMutation(of: self, keyPath: Self.keyPath(slot)) {}
            _ = cvu_set_retiring_sentinel(before)
        }
        slots.withLock { $0.free.append(slot) }
    }
}

#endif
