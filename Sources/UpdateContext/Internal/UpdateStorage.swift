import CCoalescingSupport
import Foundation
import NotificationCoalescing

/// The storage of a ``ViewUpdatingContext``: it feeds events to the ``UpdateStateMachine``, performs the
/// actions it returns, and calls updaters only outside its lock. The scheduler holds this, never the
/// context, so releasing the context frees it at once.
///
/// Two worlds meet here. The state machine is confined to the main thread (the scheduler's thread) and
/// read without a lock, which keeps a request on an already-dirty context at a few nanoseconds.
/// What other threads touch — the inbox of their requests, the updaters, the link — is in `shared`,
/// behind a lock, with one-byte atomic flags (the buffer's elements) so that the main thread takes the
/// lock only when there is something to take.
///
/// The path of a request: ``setNeedsUpdate(_:)`` → (main thread) the machine's `setNeedsUpdate` →
/// `.askForTurn` → `scheduleOnOwnerThread` → at the end of the cycle the scheduler calls
/// ``performTurn(_:)`` → `turnBegan`, the inbox applied, `turnEnded` → ``deliver(_:)`` → each updater.
/// From another thread: ``post(_:)`` puts it in the inbox and registers for the next turn (one wake-up),
/// where it is applied and delivered in that same turn.
final class UpdateStorage: ManagedBuffer<UpdateStorageHeader, UInt8>, TurnClient, RegistrationTarget {
    // Not `Sendable` by declaration (no `ManagedBuffer` may be), but safe to share: the header's `machine`
    // is read and written only on the scheduler's thread — every entry point checks `isOnSchedulerThread`
    // first, or is `performTurn`, which the scheduler calls there — and never across a call out to user
    // code (updaters run after the event returned). The header's `shared` is read and written only under
    // this object's striped lock (`withShared`). The flag bytes (the elements) only with the atomic
    // functions of CCoalescingSupport. `scheduler` is immutable.
    //
    // One allocation holds it all (scheduler, state machine, inbox, first updater, flags): a context is
    // this and its public face. The lock is striped (`StripedLocks`): a `pthread_mutex_t` alone is 40
    // bytes on Linux, and every critical section here is a few instructions that never call out.

    static let inboxFlag = 0  // the inbox holds requests (set under the lock)
    static let scheduledFlag = 1  // the machine's `isScheduled` (bit 0) and `f == false` (bit 1), for other threads
    static let cancelledFlag = 2  // the context is gone
    private static let animatedFlag = 3  // the default `animated`
    private static let refreshFlag = 4  // joined a refresh hub (set once, before the context is shared)
    static let ownerConnectedFlag = 5  // a `ViewUpdating` object connected its `updateView(animated:)`
    static let transactionFlag = 6  // the ledger holds a pending transaction (main thread)
    static let diagnosticsBits = 7  // `DiagnosticsBits`, changed with `cvu_bits_*`
    private static let flagCount = 8

    static func make(animated: Bool, scheduler: CoalescingScheduler, label: DiagnosticLabel) -> UpdateStorage {
        precondition(Layout.isAsDeclared, "UpdateStorage: the header's layout is not the one Layout computes")
        let buffer = create(minimumCapacity: flagCount) { _ in
            UpdateStorageHeader(scheduler: scheduler, label: label)
        }
        let storage = unsafeDowncast(buffer, to: UpdateStorage.self)
        storage.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: flagCount) }
        cvu_flag_store_relaxed(storage.flags + animatedFlag, animated)
        return storage
    }

    deinit {
        // A given label's entry goes with the last holder of the storage (the scheduler, a link's face may
        // outlive the context): until then reports and descriptions still name it.
        label.release()
    }

    /// Byte offsets of the header's fields, from sizes and alignments in declaration order: constants the
    /// optimiser folds (`MemoryLayout.offset(of:)` with a key path was not folded, and instantiating the key
    /// path retained and released an object on every request). `make` checks them once.
    enum Layout {
        @inline(__always)
        static func roundUp(_ value: Int, _ alignment: Int) -> Int { (value + alignment - 1) & ~(alignment - 1) }
        static let machine = 0
        @inline(__always)
        static var scheduler: Int {
            roundUp(MemoryLayout<UpdateStateMachine>.size, MemoryLayout<Unmanaged<CoalescingScheduler>>.alignment)
        }
        @inline(__always)
        static var shared: Int {
            roundUp(
                scheduler + MemoryLayout<Unmanaged<CoalescingScheduler>>.size,
                MemoryLayout<UpdateStorageHeader.Shared>.alignment)
        }
        @inline(__always)
        static var claimed: Int {
            roundUp(shared + MemoryLayout<UpdateStorageHeader.Shared>.size, MemoryLayout<UInt32>.alignment)
        }
        @inline(__always)
        static var label: Int {
            roundUp(claimed + MemoryLayout<UInt32>.size, MemoryLayout<DiagnosticLabel>.alignment)
        }
        /// Whether the computed offsets are the compiler's (evaluated once).
        static let isAsDeclared: Bool =
            MemoryLayout<UpdateStorageHeader>.offset(of: \.machine) == 0
            && MemoryLayout<UpdateStorageHeader>.offset(of: \.unretainedScheduler) == scheduler
            && MemoryLayout<UpdateStorageHeader>.offset(of: \.shared) == shared
            && MemoryLayout<UpdateStorageHeader>.offset(of: \.claimedUpdater) == claimed
            && MemoryLayout<UpdateStorageHeader>.offset(of: \.label) == label
    }

    /// One field of the header, in place. The header's address is stable for this object's life (a
    /// `ManagedBuffer`'s header does not move). Each field gets a pointer of its own, so that an access to
    /// one (the state machine, on the main thread) is never an access to another (the shared state, under
    /// the lock, from any thread) — an access through `header.pointee.field` would be an access to the
    /// whole header, which ThreadSanitizer reports as a race — and pointers skip the dynamic exclusivity
    /// checks of a class property, which the confinement and locking described above make unnecessary.
    @inline(__always)
    private func field<Field>(at offset: Int, as _: Field.Type) -> UnsafeMutablePointer<Field> {
        withUnsafeMutablePointerToHeader { header in
            UnsafeMutableRawPointer(header).advanced(by: offset).assumingMemoryBound(to: Field.self)
        }
    }

    /// The state machine: main thread (the scheduler's thread) only.
    @inline(__always)
    var machinePointer: UnsafeMutablePointer<UpdateStateMachine> {
        field(at: Layout.machine, as: UpdateStateMachine.self)
    }

    @inline(__always)
    private var schedulerPointer: UnsafeMutablePointer<Unmanaged<CoalescingScheduler>> {
        field(at: Layout.scheduler, as: Unmanaged<CoalescingScheduler>.self)
    }

    /// The address of `claimedUpdater`, for the atomic functions.
    @inline(__always)
    var claimedUpdaterPointer: UnsafeMutablePointer<UInt32> {
        field(at: Layout.claimed, as: UInt32.self)
    }

    /// What diagnostics call the context (immutable: any thread).
    var label: DiagnosticLabel {
        field(at: Layout.label, as: DiagnosticLabel.self).pointee
    }

    /// The flag bytes (see the indexes above), stable for this object's life.
    @inline(__always)
    var flags: UnsafeMutablePointer<UInt8> {
        withUnsafeMutablePointerToElements { $0 }
    }

    /// The scheduler, unretained (see `UpdateStorageHeader.unretainedScheduler`): callers hold it alive.
    @inline(__always)
    func withScheduler<Result>(_ body: (CoalescingScheduler) -> Result) -> Result {
        schedulerPointer.pointee._withUnsafeGuaranteedRef(body)
    }

    /// Whether the calling thread is the scheduler's (the main thread): asked on every request, so asked
    /// without retaining the scheduler.
    @inline(__always)
    var isOnSchedulerThread: Bool {
        schedulerPointer.pointee._withUnsafeGuaranteedRef { $0.isCurrentFast }
    }

    /// ``isOnSchedulerThread`` by the thread-local test alone (see `isCurrentByThreadIdentity`): for a fast
    /// path whose slow path asks again.
    @inline(__always)
    var isOnSchedulerThreadWithoutCall: Bool {
        schedulerPointer.pointee._withUnsafeGuaranteedRef { $0.isCurrentByThreadIdentity }
    }

    /// The shared state, for the delivery loop, which takes the lock by hand (`StripedLocks.stripe(for:)`,
    /// `cvu_stripe_lock`/`cvu_stripe_unlock`) around a few loads and a store: through `withShared` the
    /// generic lock was called unspecialised there, with its result copied through value witnesses.
    @inline(__always)
    var sharedPointer: UnsafeMutablePointer<UpdateStorageHeader.Shared> {
        field(at: Layout.shared, as: UpdateStorageHeader.Shared.self)
    }

    /// Runs `body` on the shared state under the lock. Never call out to user code inside.
    @inline(__always)
    func withShared<Result>(_ body: (inout UpdateStorageHeader.Shared) -> Result) -> Result {
        let shared = field(at: Layout.shared, as: UpdateStorageHeader.Shared.self)
        return StripedLocks.withLock(for: self) { body(&shared.pointee) }
    }

    var animated: Bool {
        get { cvu_flag_load_relaxed(flags + Self.animatedFlag) }
        set { cvu_flag_store_relaxed(flags + Self.animatedFlag, newValue) }
    }

    /// Whether the context observes lifecycle events (it then leaves the refresh hub when it goes).
    var refreshes: Bool {
        get { cvu_flag_load_relaxed(flags + Self.refreshFlag) }
        set { cvu_flag_store_relaxed(flags + Self.refreshFlag, newValue) }
    }

    /// The owner-connected byte's bits: connected now (`startUpdatingView()`, until `removeUpdaters()`), and
    /// connected at least once (for the "nothing connected" report).
    static let ownerConnectedNow: UInt8 = 1
    static let ownerConnectedOnce: UInt8 = 2

    /// Whether the `ViewUpdating` owner is connected now (a hint: ``addOwnerUpdater(_:)`` decides). Any thread.
    var isOwnerConnectedNow: Bool {
        cvu_bits_load(flags + Self.ownerConnectedFlag) & Self.ownerConnectedNow != 0
    }

    /// Marks the context as connected to its `ViewUpdating` owner; `false` when it already is. Under the lock
    /// (``addOwnerUpdater(_:)``).
    func markOwnerConnected() -> Bool {
        cvu_bits_fetch_or(flags + Self.ownerConnectedFlag, Self.ownerConnectedNow | Self.ownerConnectedOnce)
            & Self.ownerConnectedNow == 0
    }

    /// The owner's updater went with every other (`removeUpdaters()`): `startUpdatingView()` connects it again.
    /// Under the lock.
    func markOwnerDisconnected() {
        _ = cvu_bits_fetch_and(flags + Self.ownerConnectedFlag, ~Self.ownerConnectedNow)
    }

    var inboxHasRequests: Bool { cvu_flag_load_acquire(flags + Self.inboxFlag) }
    /// Set once, under the lock, when the context goes; read anywhere (under the lock, or not).
    var isCancelled: Bool { cvu_flag_load_acquire(flags + Self.cancelledFlag) }

    // MARK: Requests

    @inline(__always)
    func setNeedsUpdate(_ flag: Bool?, file: StaticString = #fileID, line: UInt = #line) {
        if isNoOpOnTheFastPath(flag) { return }
        setNeedsUpdateSlowPath(flag, file: file, line: line)
    }

    /// `setNeedsUpdate` for a request the library makes for the user's code (a property, a tracked change):
    /// `site` is made only on the slow path.
    @inline(__always)
    func setNeedsUpdate(_ flag: Bool?, site: @autoclosure () -> RequestSite) {
        if isNoOpOnTheFastPath(flag) { return }
        setNeedsUpdateSlowPath(flag, site: site())
    }

    /// The fast path: on the main thread, outside `withUpdateTransaction`, an already-dirty context with
    /// nothing new takes no lock, allocates nothing and calls nothing. (An animated request changes a
    /// pending transaction's animation: not a no-op then.) Everything else is outlined, so that this path
    /// keeps a small frame.
    @inline(__always)
    private func isNoOpOnTheFastPath(_ flag: Bool?) -> Bool {
        if !cvu_transaction_scopes_active() && isOnSchedulerThread && !inboxHasRequests
            && machinePointer.pointee.isNoOp(flag) && (flag != true || !hasPendingTransaction)
        {
            if cvu_diagnostics_is_counting() { machinePointer.pointee.absorbed &+= 1 }
            return true
        }
        return false
    }

    /// The slow path of a call in the user's code: its site is made only when diagnostics need it (while
    /// recording, inside a delivery, in a scope), not on every first request of a cycle.
    @inline(never)
    private func setNeedsUpdateSlowPath(_ flag: Bool?, file: StaticString, line: UInt) {
        slowPath(flag) { RequestSite(file: file, line: line) }
    }

    @inline(never)
    private func setNeedsUpdateSlowPath(_ flag: Bool?, site: RequestSite) {
        slowPath(flag) { site }
    }

    @inline(__always)
    private func slowPath(_ flag: Bool?, site: () -> RequestSite) {
        // Inside `withUpdateTransaction` (on this thread), the request carries the current transaction.
        if cvu_transaction_scopes_active(), let current = UpdateTransaction.scoped {
            request(current.applying(flag), update: false, site: site())
            return
        }
        guard isOnSchedulerThread else {
            if cvu_diagnostics_is_recording() { noteRequestElsewhere(site()) }
            post(.setNeedsUpdate(flag))
            return
        }
        noteSlowPathRequest(lazily: site)
        drainInboxIfNeeded()
        perform(machinePointer.pointee.setNeedsUpdate(flag), forPlainRequest: flag)
    }

    /// A change that a request with `flag` will follow is about to land: on the scheduler's thread, when
    /// that request would animate (its flag, or with no flag the transaction of the current scope) and a
    /// non-animated update is pending, the rules' early flush is made now, so that it shows the state
    /// *before* the change and the animated delivery animates the change. Elsewhere it does nothing: from
    /// another thread the requests are applied in arrival order on the main thread (see the rules).
    func flushBeforeChange(_ flag: Bool?) {
        // A request with no flag outside a scope never flushes.
        guard UpdateTransaction.effectiveFlag(of: flag) == true, isOnSchedulerThread, !isCancelled else { return }
        drainInboxIfNeeded()
        guard let flush = machinePointer.pointee.flushBeforeAnimatedChange() else { return }
        publishScheduled()
        deliver(flush)
    }
}
