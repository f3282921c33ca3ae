import CCoalescingSupport
import Foundation

/// Decides when "the end of a cycle" is: the moment pending coalesced work is delivered.
///
/// A coalescing context hands its pending work to a scheduler, which calls it back once per *turn*,
/// on the scheduler's own thread. Three schedulers ship:
///
/// - ``RunLoopScheduler``: a turn is a run-loop pass about to wait (or exiting), in the modes the
///   work asked for. The default, and what apps use: `.mainRunLoop` for the main thread.
/// - ``DispatchMainScheduler``: a turn is one block on `DispatchQueue.main`. For programs whose main
///   thread sits in `dispatchMain()` or an `async` main, where no run loop turns on Linux.
/// - ``ManualScheduler``: a turn happens when you call ``ManualScheduler/turn(mode:file:line:)``. For tests.
///
/// ```swift
/// import Foundation
/// import NotificationCoalescing
///
/// let context = NotificationCoalescingContext(scheduler: .dispatchMain)
/// ```
///
/// ## Writing a scheduler
/// Subclass it to bring your own cycle (a timer, a display link, a game loop). The contract:
///
/// - A **turn** is one call of ``runTurn(mode:file:line:)``, made by you, on the scheduler's thread (where
///   ``isCurrent`` is true). In it every context that asked for a turn delivers once, on that thread.
///   Work scheduled during a turn (by a handler) waits for the next one.
/// - A context **asks for a turn** through the scheduler; the scheduler then calls
///   ``requestTurn(insideTurn:)`` once for the whole batch, from whichever thread asked. Override it to
///   arrange for a call of ``runTurn(mode:file:line:)`` soon (wake your thread, start your timer). It is not called
///   again until the next turn has begun, so one wake-up serves any number of requests.
/// - **Modes** are optional. A turn in `mode` runs work registered for that mode, or for `.common` when
///   ``isCommon(_:)`` says the mode is a common one; a turn with mode `nil` runs everything. ``currentMode``
///   tells `.now` posts which mode the thread is in.
/// - ``isMainThreadScheduler`` says whether turns are the main thread's cycles (or stand in for them):
///   `ViewUpdatingContext` accepts exactly such schedulers.
///
/// ```swift
/// import Foundation
/// import NotificationCoalescing
///
/// final class TimerScheduler: CoalescingScheduler, @unchecked Sendable {
///     // @unchecked Sendable: the timer is created once and only read afterwards.
///     private var timer: Timer?
///     override var isMainThreadScheduler: Bool { true }
///     override var isCurrent: Bool { Thread.isMainThread }
///     func start() {   // on the main thread, with its run loop running
///         timer = Timer.scheduledTimer(withTimeInterval: 1.0 / 30, repeats: true) { [unowned self] _ in
///             runTurn()
///         }
///     }
///     override func requestTurn(insideTurn: Bool) {}   // the timer turns anyway
/// }
/// ```
///
/// > Important: Work is scheduled from any thread; turns, and therefore every delivery, happen only on
/// > the scheduler's thread (``isCurrent`` is true there).
open class CoalescingScheduler: @unchecked Sendable {
    // @unchecked Sendable: the lists shared between threads are in `queue`, behind a lock; the "turn
    // asked" mark is an atomic word (`turnWord`). `ownerWaiting`, the running turns and `turnSerial` are touched
    // only on the scheduler's own thread (in `runTurn`, which asserts it, and in `scheduleOnOwnerThread`,
    // whose callers have checked `isCurrent`). The shipped subclasses hold only immutable or locked state,
    // or state confined to the scheduler's thread in the same way; a user's subclass must do the same
    // (its declaration repeats `@unchecked Sendable` and says so).
    // The confined properties are `@exclusivity(unchecked)`: only one thread ever touches them, and no
    // mutation of them calls out to other code, so the dynamic exclusivity checks (a thread-local lookup
    // on every access, measured at ~10% of a large fan-out) can never fire.

    /// A client whose work waits for a mode that the turns so far did not admit.
    struct Parked {
        let client: any TurnClient
        let modes: [RunLoop.Mode]
    }

    struct Queue {
        /// Clients waiting for the next turn, in the order they asked (scheduled from other threads).
        var waiting: [any TurnClient] = []
        /// Clients whose work waits for another mode: called at every turn, asking for none.
        var parked: [Parked] = []
    }

    let queue = Locked(Queue())
    private let owner = ThreadIdentity.current
    /// Words at a stable address. The first (``Word/mark``): bit 0, whether a turn has been asked for since
    /// the last one began (one mark for every thread and every client, so one wake-up serves the whole
    /// batch); the other bits, the number of the last batch that asked (a batch is everything one wake-up
    /// serves). Then the diagnostics' words (see ``Word``).
    @usableFromInline let turnWord: UnsafeMutablePointer<UInt64>

    /// The indexes of the words at `turnWord`.
    @usableFromInline
    enum Word {
        /// The turn mark (see `turnWord`).
        static let mark = 0
        /// When the last turn that called clients began (``now()``; 0: never): written on the
        /// scheduler's thread, read anywhere.
        static let lastTurn = 1
        /// The number of turns that called clients (same threads as `lastTurn`).
        static let turns = 2
        /// When the newest batch asked for a turn (``now()``): one clock read per batch, so
        /// that a description tells an overdue turn from a scheduler that was merely idle before.
        static let asked = 3
        /// The identity of the last thread whose list of schedulers (``ThreadSchedulers``) this one joined.
        @inlinable static var joinedThread: Int { 4 }
        /// Bit 0: a turn that did not come was reported (`schedulerNotTurning`, once).
        static let reported = 5
        static let count = 6
    }
    /// Clients scheduled on the scheduler's own thread: no lock needed (confined to that thread).
    @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) final var ownerWaiting: [any TurnClient] = []
    /// Clients listed on the scheduler's own thread while a turn was asked for already (wrapping): every 16th
    /// looks whether that turn is late (a clock read per 16 listings, none per request).
    @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) final var listedWhileAsked: UInt8 = 0
    /// Counts turns, so that a client registered twice can tell it has already run in this one.
    @exclusivity(unchecked) nonisolated(unsafe) var turnSerial: UInt64 = 0
    /// Nesting depth of `runTurn` on the scheduler's thread (a handler may run a nested loop).
    @exclusivity(unchecked) nonisolated(unsafe) var turnDepth = 0
    /// Deliveries timed on their own under way on the scheduler's thread (see ``timesDeliveryAlone``).
    @exclusivity(unchecked) nonisolated(unsafe) var timedDeliveries = 0
    /// When the last slow turn was reported (``now()``), if one was: at most one report a second.
    @exclusivity(unchecked) nonisolated(unsafe) var lastSlowTurnReport: UInt64?
    /// The innermost turn under way on the scheduler's thread (no clients outside one): the clients it took, and
    /// the next one it calls. What it has not reached waits for it (a turn inside it serves only what was listed
    /// since it began); an animating scope entered in one of its updaters flushes it first
    /// (``waitingClients()``). A turn inside it keeps the outer one's cursor on its own stack while it runs.
    @exclusivity(unchecked) nonisolated(unsafe) var current = (clients: [any TurnClient](), next: 0)

    /// What the turn under way has not reached yet (on the scheduler's thread).
    var unreached: ArraySlice<any TurnClient> { current.clients[current.next...] }
    /// The number of the last batch a turn has begun to serve (0: none).
    @exclusivity(unchecked) nonisolated(unsafe) var servedBatch: UInt64 = 0

    /// How ``isCurrentFast`` answers without calling ``isCurrent``: the calling thread's identity word
    /// (`cvu_thread_identity`), masked, equals `threadExpected` — then it is the scheduler's thread; when
    /// it does not, `threadTestIsExact` says whether that settles it or ``isCurrent`` must be asked.
    @usableFromInline let threadMask: UInt64
    @usableFromInline let threadExpected: UInt64
    @usableFromInline let threadTestIsExact: Bool
    /// Whether a shipped scheduler declared its turns the main thread's cycles, or a stand-in for them.
    private let declaresMainThread: Bool

    /// What diagnostics call this scheduler (see ``label``).
    package let diagnosticLabel: DiagnosticLabel

    /// Creates a scheduler whose turns run on the calling thread (see ``isCurrent``).
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`.
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public init(label: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        diagnosticLabel = DiagnosticLabel(label, file: file, line: line)
        turnWord = Self.makeWords()
        (threadMask, threadExpected, threadTestIsExact) = Self.threadTest(.unknown)
        drivesPerFrameWork = false
        declaresMainThread = false
    }

    /// A scheduler that declares the thread its turns run on — ``isCurrent`` and ``isMainThreadScheduler``
    /// answer from it (an override of `isCurrent` must say the same) — and whether it drives per-frame work
    /// (``drivesPerFrameWork``).
    package init(label: DiagnosticLabel, turnThread: TurnThread, drivesPerFrameWork: Bool = false) {
        self.drivesPerFrameWork = drivesPerFrameWork
        diagnosticLabel = label
        turnWord = Self.makeWords()
        (threadMask, threadExpected, threadTestIsExact) = Self.threadTest(turnThread)
        declaresMainThread = turnThread == .main || turnThread == .mainAndOthers || turnThread == .creatorForMain
    }

    private static func makeWords() -> UnsafeMutablePointer<UInt64> {
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: Word.count)
        words.initialize(repeating: 0, count: Word.count)
        return words
    }

    /// Whether a context re-requesting itself at every turn is how this scheduler drives per-frame work (a
    /// frame-paced one), not an update loop: the update-loop report is then not made. Any thread.
    package let drivesPerFrameWork: Bool

    /// The clock the diagnostics read for this scheduler's turns and deliveries, in nanoseconds: a monotonic
    /// clock (``now()``); a ``ManualScheduler``'s moves only when told. Any thread.
    package func now() -> UInt64 {
        cvu_monotonic_now_ns()
    }

    deinit {
        turnWord.deallocate()
        diagnosticLabel.release()
    }

    /// What diagnostics call this scheduler: the label given to the initialiser, or where it was created,
    /// `#fileID:#line` (`MyModule/File.swift:12`). The shipped ones: "main run loop", "dispatch main",
    /// "frame-paced (main display)", and "run loop of <thread>" for `.currentRunLoop`. Any thread.
    public final var label: String { diagnosticLabel.string }

    // MARK: What a scheduler says about itself (override these)

    /// Whether the calling thread is the one this scheduler's turns run on.
    ///
    /// By default, the thread that created the scheduler (even once that thread has exited, no other
    /// thread is taken for it); the shipped schedulers whose turns are the main thread's answer for it. Any
    /// thread may ask.
    open var isCurrent: Bool {
        // What the shipped schedulers declared (`TurnThread`), when that settles it; else the creating thread.
        threadTestIsExact ? cvu_thread_identity() & threadMask == threadExpected : owner.isCurrent
    }

    /// Whether turns are the main thread's cycles, or stand in for them (a test's manual scheduler):
    /// what `ViewUpdatingContext` requires of its scheduler. `false` by default for a subclass of yours; `true`
    /// for `.mainRunLoop`, `.dispatchMain`, `.framePaced` and a ``ManualScheduler``.
    open var isMainThreadScheduler: Bool { declaresMainThread }

    /// The mode the scheduler's thread is running in right now, or `nil` outside a running loop (or for
    /// a scheduler without modes). Read it on the scheduler's thread. `nil` by default.
    open var currentMode: RunLoop.Mode? { nil }

    /// Whether `mode` is one of the common modes: work registered for `.common` runs in its turns.
    /// By default `.default` and `.common` are.
    open func isCommon(_ mode: RunLoop.Mode) -> Bool { mode == .default || mode == .common }

    /// Called when work asks for `modes` other than the default one, before it is scheduled: make sure
    /// turns happen in them (a run loop adds its observer to those modes). When it returns, turns in
    /// those modes must be arranged: a caller schedules its work right after. Does nothing by default.
    open func prepare(modes: [RunLoop.Mode]) {}

    /// Called when a turn is needed and none has been asked for since the last one began: arrange for
    /// ``runTurn(mode:file:line:)`` to be called soon on the scheduler's thread. Any thread calls it.
    ///
    /// Called once per batch: whichever contexts and threads ask, it is not called again until the next
    /// turn has begun, so one wake-up serves any number of requests.
    ///
    /// - Parameter insideTurn: `true` when asked on the scheduler's thread from inside a turn (a handler
    ///   scheduled more work): the turn under way will not pick it up, so the thread must not sleep
    ///   before another turn.
    ///
    /// Does nothing by default: right for a scheduler that turns on its own clock anyway.
    open func requestTurn(insideTurn: Bool) {}

    // MARK: Turning

    /// Runs one turn in `mode` on the scheduler's thread: every context that asked for a turn delivers
    /// what the mode admits.
    ///
    /// - Parameters:
    ///   - mode: The mode of the turn; `nil` admits work of every mode.
    ///   - file: The caller's file (`#fileID`), named by the message a call off the scheduler's thread stops with.
    ///   - line: The caller's line.
    /// A turn inside another (a nested run loop in a handler) calls only the clients listed since the turn
    /// under way took its list: what that turn has not reached yet waits for it, as on the main run loop, whose
    /// observer CFRunLoop never runs inside itself.
    /// - Returns: How many clients this turn called (0 for a turn that found nothing to do).
    ///
    /// > Important: Call it only on the scheduler's thread (``isCurrent``): called elsewhere, it stops the
    /// > program in every build, naming the caller's line. Work that a handler schedules during the turn
    /// > waits for the next one.
    @discardableResult
    public final func runTurn(mode: RunLoop.Mode? = nil, file: StaticString = #fileID, line: UInt = #line) -> Int {
        if !isCurrent {
            Misuse.unrecoverable(
                "CoalescingScheduler.runTurn(mode:) must be called on the scheduler's thread (\(label))", file: file,
                line: line)
        }
        return runTurn(mode: mode, isCommonMode: mode.map(isCommon) ?? true)
    }
}

// The package's contexts as a scheduler's clients: registering one for the next turn, and the turn that
// serves them (the owner thread's list, the others' queue, work parked for a run-loop mode).

extension CoalescingScheduler {
    // MARK: Clients (the package's contexts)

    /// Registers `client` for the next turn and asks for one; with `nil`, only asks for a turn.
    ///
    /// Clients dedupe themselves: a client is passed here at most once until its next `performTurn`.
    package final func schedule(_ client: (any TurnClient)?) {
        if let client {
            queue.withLock { $0.waiting.append(client) }
        }
        if hasRequestedTurn { return noticeLateTurn() }  // another thread's request: is the turn asked for late?
        askForTurn()
    }

    /// The same as ``schedule(_:)`` without a lock, for a caller that knows it is on the scheduler's
    /// thread (it has checked ``isCurrent``): the path a coalesced request takes on the main thread.
    /// Inlinable, so that the contexts' storage (another module) lists itself without a call.
    @inlinable @inline(__always)
    package final func scheduleOnOwnerThread(_ client: some TurnClient) {
        ownerWaiting.append(client)
        joinCurrentThread()
        // The plain load keeps a burst of requests to one shared write (and the call below off the path).
        if cvu_word_load_relaxed(turnWord) & 1 != 0 {
            listedWhileAsked &+= 1
            if listedWhileAsked & 15 == 0 { noticeLateTurn() }
            return
        }
        askForTurn()
    }

    /// Joins the calling thread's list of schedulers (``ThreadSchedulers``): call it on the scheduler's own
    /// thread only (where it lists work, turns, or gets a view context). A load and a compare when this thread
    /// was the last it joined.
    @inlinable @inline(__always)
    package final func joinCurrentThread() {
        if cvu_word_load_relaxed(turnWord + Word.joinedThread) != cvu_thread_identity() { joinCurrentThreadSlowly() }
    }

    @usableFromInline
    package final func joinCurrentThreadSlowly() {
        cvu_word_store_relaxed(turnWord + Word.joinedThread, cvu_thread_identity())
        ThreadSchedulers.current.add(self)
    }

    /// Whether the scheduler's thread runs a mode that is not a common one now (a nested loop in a mode of
    /// the app's own, or a turn in one): view updates wait for a common pass. On the scheduler's thread.
    package final var isInPrivateMode: Bool {
        currentMode.map { !isCommon($0) } ?? false
    }

    /// Whether clients may be waiting for a turn (the next one, parked for a mode, or not reached yet by a turn
    /// under way). On the scheduler's thread only.
    package final var mayHaveWaitingClients: Bool {
        !ownerWaiting.isEmpty || cvu_word_load_relaxed(turnWord) & 1 != 0 || !unreached.isEmpty
            || queue.withLock { !$0.parked.isEmpty }
    }

    /// The clients waiting for a turn, each with the modes it is parked for (`nil`: the next turn), retained in
    /// the result (not the one a turn is calling): on the scheduler's thread, those the turns under way have not
    /// reached and its own list; from any thread, what other threads listed and what is parked. For work that
    /// must act on everything pending before the turn (an animated scope's flush, ``ManualScheduler/isIdle``)
    /// and for descriptions.
    package final func waitingClients() -> [(client: any TurnClient, modes: [RunLoop.Mode]?)] {
        var clients: [(client: any TurnClient, modes: [RunLoop.Mode]?)] = []
        if isCurrent {
            for client in unreached + ownerWaiting { clients.append((client, nil)) }
        }
        queue.withLock { queue in
            clients += queue.waiting.map { ($0, nil) }
            clients += queue.parked.map { ($0.client, $0.modes) }
        }
        return clients
    }

    /// The clients listed on the scheduler's own thread for the next turn (none elsewhere): what an animating
    /// scope's flush looks at again after each of its rounds.
    package final var listedOnItsThread: [any TurnClient] {
        isCurrent ? ownerWaiting : []
    }

    /// Marks a turn as asked for; the first mark since the last turn began calls ``requestTurn(insideTurn:)``.
    @usableFromInline
    final func askForTurn() {
        // The plain load keeps a burst of requests to one shared write; the exchange decides, among threads
        // racing, which one asks (and opens the next batch).
        var word = cvu_word_load_relaxed(turnWord)
        while true {
            if word & 1 != 0 { return }
            if cvu_word_compare_exchange(turnWord, word, (word &+ 2) | 1) { break }
            word = cvu_word_load_relaxed(turnWord)
        }
        cvu_word_store_relaxed(turnWord + Word.asked, now())
        requestTurn(insideTurn: isCurrent && turnDepth > 0)
    }

    /// Runs one turn in `mode` on the scheduler's thread: every waiting client is called once.
    ///
    /// A client that answers that work remains (for modes this turn did not admit) is parked: it is
    /// called again at every later turn, but does not by itself ask for one.
    ///
    /// A turn inside another turn (a nested run loop in a handler: a modal wait) takes only what was listed
    /// since the turn under way took its list; what that turn has not reached waits for it.
    /// - Returns: How many clients this turn called.
    @discardableResult
    package final func runTurn(mode: RunLoop.Mode?, isCommonMode: Bool) -> Int {
        // The mark first, then the lists: a client added after the lists were taken finds the mark cleared
        // and asks for the next turn (a new batch). The batch whose mark this clears is served here.
        let word = cvu_word_fetch_and(turnWord, ~1)
        if word & 1 != 0 { servedBatch = word >> 1 }
        joinCurrentThread()
        // Take the owner thread's list by swapping, and give its buffer back afterwards: a large fan-out
        // then reuses one allocation turn after turn instead of growing a new array every cycle. The order:
        // the owner thread's list, what was parked, what other threads listed.
        var clients: [any TurnClient] = []
        swap(&clients, &ownerWaiting)
        queue.withLock { queue in
            clients += queue.parked.map(\.client)
            clients += queue.waiting
            queue.waiting.removeAll(keepingCapacity: queue.waiting.count <= 1_024)
            queue.parked.removeAll()
        }
        let count = clients.count
        guard count > 0 else {
            // An idle turn lets a large buffer go: a one-off spike (100 000 contexts dirtied once) must
            // not pin its buffer for the thread's life. Busy turns keep it, and reuse it.
            if clients.capacity <= 1_024 { swap(&clients, &ownerWaiting) }
            return 0
        }
        turnSerial &+= 1
        let began = noteTurn()
        let turn = SchedulerTurn(mode: mode, isCommonMode: isCommonMode, serial: turnSerial)
        var called = 0
        let interval = Signposts.begin(.turn, label: label, count: count)
        // The cursor is `current`'s, where an animating scope's flush finds what this turn has not reached (the
        // list is shared with `clients`, not copied: nobody writes it).
        turnDepth += 1
        let outer = current
        current = (clients, 0)
        while current.next < count {
            let client = current.clients[current.next]
            current.next += 1
            called += 1
            // Parked at once, not at the end of the turn: a nested pass that begins later in this turn takes it.
            if let modes = client.performTurn(turn) {
                queue.withLock { $0.parked.append(Parked(client: client, modes: modes)) }
            }
        }
        current = outer
        turnDepth -= 1
        Signposts.end(interval)
        noteTurnEnded(began: began, clients: clients)
        if ownerWaiting.isEmpty {
            clients.removeAll(keepingCapacity: true)
            swap(&clients, &ownerWaiting)
        }
        return called
    }
}

/// Which thread a scheduler's turns run on, told without a call on the hot path, and the built-in
/// schedulers by their short names.
extension CoalescingScheduler {
    /// Which thread a shipped scheduler's turns run on, so that the hot path can tell without a call.
    package enum TurnThread {
        /// The thread that created it (``isCurrent`` is not overridden).
        case creator
        /// The thread that created it, standing in for the main thread (a ``ManualScheduler``: a test's).
        case creatorForMain
        /// The process's main thread, exactly.
        case main
        /// The main thread, and others that ``isCurrent`` knows of (the main queue under `dispatchMain()`).
        case mainAndOthers
        /// Unknown: ask ``isCurrent`` (a user's subclass, which may override it).
        case unknown
    }

    static func threadTest(_ thread: TurnThread) -> (UInt64, UInt64, Bool) {
        switch thread {
        case .creator, .creatorForMain: (~0, cvu_thread_identity(), true)
        case .main: (1, 1, true)
        case .mainAndOthers: (1, 1, false)
        case .unknown: (0, 1, false)
        }
    }

    /// ``isCurrent`` for the hot path: a thread-local read and a compare for the shipped schedulers, a
    /// call of ``isCurrent`` for a subclass (which may override it). Any thread.
    @inlinable @inline(__always)
    package final var isCurrentFast: Bool {
        if cvu_thread_identity() & threadMask == threadExpected { return true }
        return !threadTestIsExact && isCurrent
    }
}

// The built-in schedulers have one spelling each, usable wherever a scheduler is expected
// (`scheduler: .mainRunLoop`) and typed as what they are (`CoalescingScheduler.mainRunLoop.prepare(modes:)`).
extension CoalescingScheduler {
    /// The main thread's run loop: the default for apps and XCTest. Ends a cycle at the end of each pass
    /// of the main run loop in a mode it turns in.
    public static var mainRunLoop: RunLoopScheduler { RunLoopScheduler.mainScheduler }

    /// The calling thread's run loop (one scheduler per thread, created on first use and kept in the
    /// thread's dictionary, so it goes with the thread once no context uses it). On the main thread it is
    /// ``mainRunLoop``.
    public static var currentRunLoop: RunLoopScheduler { RunLoopScheduler.currentScheduler }

    /// `DispatchQueue.main`, for `dispatchMain()` and `async` main programs (and Swift Testing on Linux).
    public static var dispatchMain: DispatchMainScheduler { DispatchMainScheduler.sharedScheduler }
}

// What a scheduler says about the work waiting for it: the liveness questions, any thread.
extension CoalescingScheduler {
    /// Whether clients are listed for a turn: for the next one, parked until one of their modes turns, or — on
    /// the scheduler's thread, inside a turn — not reached yet by the turns under way. A listed client may have
    /// nothing left to do (a context delivered at once by `updateIfNeeded()` stays listed until its turn):
    /// ``ManualScheduler/isIdle`` asks each.
    ///
    /// Read it on the scheduler's thread for an exact answer (work scheduled there is not locked).
    public final var hasPendingWork: Bool {
        queue.withLock { !$0.waiting.isEmpty || !$0.parked.isEmpty }
            || (isCurrent && (!ownerWaiting.isEmpty || !unreached.isEmpty))
    }

    /// Whether a turn in `mode` would find work to do: a turn has been asked for, or work parked for another mode
    /// is admitted by `mode` (`nil` admits every mode). What a turn under way has not reached yet is not such
    /// work: a turn inside it does not serve it.
    ///
    /// The liveness rule of every scheduler: the scheduler's thread must not go to sleep while this is
    /// true for the mode it runs in. A ``RunLoopScheduler`` checks it after the last observer of each
    /// pass; a ``ManualScheduler``'s ``ManualScheduler/runUntilIdle(mode:maxTurns:file:line:)`` turns until it is
    /// false. Any thread; exact on the scheduler's thread.
    public final func hasWork(admittedBy mode: RunLoop.Mode?) -> Bool {
        hasRequestedTurn || hasParkedWork(admittedBy: mode)
    }

    /// Whether work parked for other modes is admitted by `mode`.
    package final func hasParkedWork(admittedBy mode: RunLoop.Mode?) -> Bool {
        let turn = SchedulerTurn(mode: mode, isCommonMode: mode.map(isCommon) ?? true, serial: 0)
        return queue.withLock { queue in queue.parked.contains { turn.admits($0.modes) } }
    }

    /// Whether a turn has been asked for and not yet begun: work that the next turn will do.
    package final var hasRequestedTurn: Bool {
        cvu_word_load_acquire(turnWord) & 1 != 0
    }

    /// The number of the newest batch: the one a turn has been asked for, while ``hasRequestedTurn``.
    /// Read it in ``requestTurn(insideTurn:)`` to learn the number of the batch that asks (a later one,
    /// if a turn and another batch came meanwhile: that turn served the asking batch). Any thread.
    package final var newestBatch: UInt64 {
        cvu_word_load_acquire(turnWord) >> 1
    }

    /// Whether a turn has begun to serve batch `batch` (one numbered by ``newestBatch``). Read it on the
    /// scheduler's thread.
    package final func hasServed(batch: UInt64) -> Bool {
        servedBatch >= batch
    }

    /// Whether a turn is under way on the scheduler's thread (read it there).
    package final var isInsideTurn: Bool {
        isCurrent && turnDepth > 0
    }
}

// What a scheduler tells diagnostics: when it last turned, whether a turn is overdue, and who waits on it.
extension CoalescingScheduler: CustomDebugStringConvertible {
    /// Whether a delivery beginning now (scheduler's thread) is timed on its own: outside every turn (a turn is
    /// timed whole) and every delivery timed on its own (whose time it is part of). Calls, not the stored
    /// properties: read from another module, they would be checked for exclusivity dynamically there.
    package final var timesDeliveryAlone: Bool {
        turnDepth == 0 && timedDeliveries == 0
    }

    /// A delivery timed on its own began (`true`) or ended (`false`) on the scheduler's thread.
    package final func timedDelivery(began: Bool) {
        timedDeliveries += began ? 1 : -1
    }

    /// A turn that calls clients began (scheduler's thread): returns the clock's reading.
    @inline(__always)
    final func noteTurn() -> UInt64 {
        let began = now()
        cvu_word_store_relaxed(turnWord + Word.lastTurn, began)
        cvu_word_store_relaxed(turnWord + Word.turns, cvu_word_load_relaxed(turnWord + Word.turns) &+ 1)
        return began
    }

    /// The turn begun at `began`, which took `clients`, has ended. A turn is timed as a whole (two clock reads
    /// a turn, none per delivery): one slower than a frame is reported (``UpdateDiagnostics/Report/Kind-swift.struct/slowTurn``)
    /// with how long it took and the labels of the clients it served — at most once a second for this scheduler,
    /// and naming a client at most once a second (``TurnClient/nameForSlowReport(at:)``). Nothing in it is
    /// blamed: the turn's time is every client's.
    @inline(__always)
    final func noteTurnEnded(began: UInt64, clients: [any TurnClient]) {
        let end = now()
        guard end &- began > UpdateDiagnostics.frameNanoseconds else { return }
        reportSlowTurn(nanoseconds: end &- began, at: end, clients: clients)
    }

    private final func reportSlowTurn(nanoseconds: UInt64, at end: UInt64, clients: [any TurnClient]) {
        if let last = lastSlowTurnReport, end &- last < UpdateDiagnostics.reportInterval { return }
        var seen = Set<ObjectIdentifier>()
        var names: [String] = []
        for client in clients where seen.insert(ObjectIdentifier(client)).inserted {
            if let name = client.nameForSlowReport(at: end) { names.append(name) }
        }
        // Every client it served was named in the last second: nothing new to say.
        guard !names.isEmpty else { return }
        lastSlowTurnReport = end
        let shown = names.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ")
        let more = names.count > 8 ? " and \(names.count - 8) more" : ""
        UpdateDiagnostics.emit(
            .slowTurn, label: label,
            message: "a turn took \(UpdateDiagnostics.milliseconds(nanoseconds)) ms, longer than a frame (16 ms): "
                + "frames are dropped while it runs. It served \(shown)\(more); one of their updaters (or a "
                + "completion, or what their requests ran) was slow. Move the slow work off the main thread.",
            duration: Double(nanoseconds) / 1e9)
    }

    /// Whether a turn has been asked for and has not begun for more than a second (any thread): measured from
    /// when the waiting batch asked, or from the last turn if one began since.
    package final var isTurnOverdue: Bool {
        guard hasRequestedTurn else { return false }
        let since = max(cvu_word_load_relaxed(turnWord + Word.asked), cvu_word_load_relaxed(turnWord + Word.lastTurn))
        return now() &- since > UpdateDiagnostics.reportInterval
    }

    /// An event that sees the scheduler waiting for its turn (a context newly listed, another thread's request,
    /// a description): a turn asked for more than a second ago that has not begun is reported, once per
    /// scheduler (`schedulerNotTurning`). Nothing polls: a scheduler that nothing touches says it only when its
    /// description is asked. A turn that begins late after a hang is not reported. Any thread, outside locks.
    @usableFromInline
    package final func noticeLateTurn() {
        guard cvu_word_load_relaxed(turnWord + Word.reported) & 1 == 0, isTurnOverdue,
            cvu_word_compare_exchange(turnWord + Word.reported, 0, 1)
        else { return }
        let waiting = queue.withLock { queue in queue.waiting.prefix(3).compactMap { $0.diagnosticLabel?.string } }
        let whose = waiting.isEmpty ? "" : " (\(waiting.map { "\"\($0)\"" }.joined(separator: ", ")) waiting)"
        UpdateDiagnostics.emit(
            .schedulerNotTurning, label: label,
            message: "a turn asked for more than a second ago has not begun\(whose). " + stallAdvice)
    }

    /// What to do when this scheduler does not turn.
    package var stallAdvice: String {
        if self is ManualScheduler {
            return "A manual scheduler turns only when its test calls turn() or runUntilIdle()."
        }
        if isMainThreadScheduler && !(self is DispatchMainScheduler) {
            return "Is the main thread blocked, or running no run loop (an async main, Swift Testing on "
                + "Linux, dispatchMain())? Use the .dispatchMain scheduler there."
        }
        return "Is its thread blocked, or not running its run loop?"
    }

    /// How many turns that called clients have run (the serial a client's last turn is compared with).
    package final var turnCount: UInt64 { cvu_word_load_relaxed(turnWord + Word.turns) }

    /// Seconds since the last turn that called clients began, or `nil` if none has.
    package final var secondsSinceLastTurn: Double? {
        let last = cvu_word_load_relaxed(turnWord + Word.lastTurn)
        guard last != 0 else { return nil }
        return Double(now() &- last) / 1e9
    }

    /// The scheduler in one line, as its description and its contexts' say it: its type and label, whether a turn
    /// is asked for, how many turns have run and when the last began, and — a turn asked for more than a second
    /// ago that has not begun — what to do (a description asked sees it: ``noticeLateTurn()``). Any thread.
    package final var statusLine: String {
        var text =
            "\(type(of: self)) \"\(label)\": " + (hasRequestedTurn ? "a turn is asked for" : "no turn is asked for")
        if let seconds = secondsSinceLastTurn {
            text += String(format: "; %llu turns, the last %.3f s ago", turnCount, seconds)
        } else {
            text += "; it has not turned yet"
        }
        if isTurnOverdue {
            text += "; a turn asked for more than a second ago has not begun. " + stallAdvice
            noticeLateTurn()
        }
        return text
    }

    /// The scheduler as a person chasing a missing update wants it: its label and type, whether a turn is
    /// asked for, how many turns have run and when the last began, and the contexts waiting on it with the
    /// modes they wait for. Any thread (contexts listed on the scheduler's own thread show only there).
    public var debugDescription: String {
        var text = statusLine
        let lines = waitingClients().map { client, modes in
            let label = client.diagnosticLabel?.string ?? "(unlabelled)"
            guard let modes else { return "waiting: \(label)" }
            return "parked until a turn in \(modes.map(\.rawValue).joined(separator: " or ")): \(label)"
        }
        if !lines.isEmpty { text += "\n  " + lines.joined(separator: "\n  ") }
        return text
    }
}

/// One turn of a scheduler, as its clients see it.
@usableFromInline
package struct SchedulerTurn {
    /// The run-loop mode of the turn; `nil` for a scheduler without modes (every mode matches).
    package let mode: RunLoop.Mode?
    /// Whether `mode` is one of the run loop's common modes.
    package let isCommonMode: Bool
    /// Different for every turn of one scheduler (a client listed twice in one turn sees the same serial).
    package let serial: UInt64

    package init(mode: RunLoop.Mode?, isCommonMode: Bool, serial: UInt64) {
        (self.mode, self.isCommonMode, self.serial) = (mode, isCommonMode, serial)
    }

    /// Whether work registered for `modes` may run in this turn.
    package func admits(_ modes: [RunLoop.Mode]) -> Bool {
        guard let mode else { return true }
        return modes.contains(mode) || (isCommonMode && modes.contains(.common))
    }
}

/// Something that has work waiting for a scheduler's turn.
///
/// Clients are handed between threads (scheduled from any thread, called on the scheduler's): each must
/// synchronise its own state.
@usableFromInline
package protocol TurnClient: AnyObject, Sendable {
    /// Does the work the turn admits, on the scheduler's thread.
    ///
    /// - Returns: `nil` when nothing remains; otherwise the modes the remaining work waits for (work this
    ///   turn did not admit). The scheduler then keeps the client for later turns, calling it at each, and
    ///   the client counts as scheduled.
    func performTurn(_ turn: SchedulerTurn) -> [RunLoop.Mode]?

    /// What diagnostics call the client (a scheduler's `debugDescription` lists who waits). Any thread.
    var diagnosticLabel: DiagnosticLabel? { get }

    /// Whether the client still has work for a turn: `false` once what it listed itself for was done before
    /// the turn (an update delivered at once). On the scheduler's thread; `true` unless the client knows.
    var hasWorkForTurn: Bool { get }

    /// What a slow turn's report calls this client, unless a slow report named it less than a second before
    /// `now` (then `nil`); a name given counts as a naming. Scheduler's thread.
    func nameForSlowReport(at now: UInt64) -> String?
}

extension TurnClient {
    package var diagnosticLabel: DiagnosticLabel? { nil }
    package var hasWorkForTurn: Bool { true }
    package func nameForSlowReport(at now: UInt64) -> String? { diagnosticLabel?.string }
}
