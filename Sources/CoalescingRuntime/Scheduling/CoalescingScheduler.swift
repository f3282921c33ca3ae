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
    // asked" mark is an atomic word (`turnWord`). `ownerWaiting`, `turnDepth` and `turnSerial` are touched
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
        /// Nonzero while the scheduler's turns are signposted (Instruments records): requests count themselves
        /// for the signposts' absorbed counts (recording counts them too). Written by its turns.
        @inlinable static var counting: Int { 5 }
        static let count = 6
    }
    /// Clients scheduled on the scheduler's own thread: no lock needed (confined to that thread).
    @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) final var ownerWaiting: [any TurnClient] = []
    /// Counts turns, so that a client registered twice can tell it has already run in this one.
    @exclusivity(unchecked) nonisolated(unsafe) var turnSerial: UInt64 = 0
    /// Nesting depth of `runTurn` on the scheduler's thread (a handler may run a nested loop).
    @exclusivity(unchecked) nonisolated(unsafe) var turnDepth = 0
    /// The number of the last batch a turn has begun to serve (0: none).
    @exclusivity(unchecked) nonisolated(unsafe) var servedBatch: UInt64 = 0

    /// How ``isCurrentFast`` answers without calling ``isCurrent``: the calling thread's identity word
    /// (`cvu_thread_identity`), masked, equals `threadExpected` — then it is the scheduler's thread; when
    /// it does not, `threadTestIsExact` says whether that settles it or ``isCurrent`` must be asked.
    @usableFromInline let threadMask: UInt64
    @usableFromInline let threadExpected: UInt64
    @usableFromInline let threadTestIsExact: Bool

    /// What diagnostics call this scheduler (see ``label``).
    package let diagnosticLabel: DiagnosticLabel

    /// How this scheduler's turns time their deliveries for the slow-updater report (``TurnStamp``): confined
    /// to the scheduler's thread, at a stable address.
    package let stamp: UnsafeMutablePointer<TurnStamp>

    /// Creates a scheduler whose turns run on the calling thread (see ``isCurrent``).
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`.
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public init(label: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        diagnosticLabel = DiagnosticLabel(label, file: file, line: line)
        turnWord = Self.makeWords()
        stamp = Self.makeStamp()
        (threadMask, threadExpected, threadTestIsExact) = Self.threadTest(.unknown)
        drivesPerFrameWork = false
    }

    /// A scheduler that declares the thread its turns run on (`isCurrent` must say the same), and whether it
    /// drives per-frame work (``drivesPerFrameWork``).
    package init(label: DiagnosticLabel, turnThread: TurnThread, drivesPerFrameWork: Bool = false) {
        self.drivesPerFrameWork = drivesPerFrameWork
        diagnosticLabel = label
        turnWord = Self.makeWords()
        stamp = Self.makeStamp()
        (threadMask, threadExpected, threadTestIsExact) = Self.threadTest(turnThread)
    }

    private static func makeWords() -> UnsafeMutablePointer<UInt64> {
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: Word.count)
        words.initialize(repeating: 0, count: Word.count)
        return words
    }

    private static func makeStamp() -> UnsafeMutablePointer<TurnStamp> {
        let stamp = UnsafeMutablePointer<TurnStamp>.allocate(capacity: 1)
        stamp.initialize(to: TurnStamp())
        return stamp
    }

    /// Whether a context re-requesting itself at every turn is how this scheduler drives per-frame work (a
    /// frame-paced one), not an update loop: the update-loop report is then not made. Any thread.
    package let drivesPerFrameWork: Bool

    /// The clock the diagnostics read for this scheduler's turns and deliveries, in nanoseconds: a monotonic
    /// clock (``now()``); a ``ManualScheduler``'s moves only when told. Any thread.
    package func now() -> UInt64 {
        cvu_monotonic_now_ns()
    }

    /// Whether requests on this scheduler's contexts count themselves: while its turns are signposted (recording
    /// counts them as well, see `cvu_diagnostics_is_recording`). Any thread.
    @inlinable
    package final var countsRequests: Bool {
        cvu_word_load_relaxed(turnWord + Word.counting) != 0
    }

    deinit {
        turnWord.deallocate()
        stamp.deinitialize(count: 1)
        stamp.deallocate()
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
    /// thread is taken for it). Any thread may ask.
    open var isCurrent: Bool { owner.isCurrent }

    /// Whether turns are the main thread's cycles, or stand in for them (a test's manual scheduler):
    /// what `ViewUpdatingContext` requires of its scheduler. `false` by default.
    open var isMainThreadScheduler: Bool { false }

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
    /// - Returns: How many clients were called (0 for a turn that found nothing to do).
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
