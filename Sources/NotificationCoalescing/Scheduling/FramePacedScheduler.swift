import CoreFoundation
import Foundation

/// Ends a cycle at most once per display frame, on the main thread: for fast sources.
///
/// A ``RunLoopScheduler`` ends a cycle at every turn of the run loop, and every wake-up from another
/// thread makes a turn: a background source sending thousands of requests a second gets hundreds to
/// thousands of deliveries a second, far more than a display shows. This scheduler turns once per frame
/// instead: every request made within a frame is delivered by that frame's one turn.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// let updateContext = ViewUpdatingContext(scheduler: .framePaced)
/// // a producer thread calls updateContext.setNeedsUpdate() 10 000 times a second…
/// // …and the view renders at most once per frame, in that frame
/// ```
///
/// - The clock is a display link where the system has one: `CADisplayLink` on iOS, tvOS and visionOS, the
///   main screen's on macOS 14 and later. ``CoalescingScheduler/framePaced`` ticks at the display's own rate;
///   ``init(label:framesPerSecond:file:line:)`` caps the display link at that rate (`preferredFrameRateRange` from
///   iOS/tvOS 15 and on macOS 14, `preferredFramesPerSecond` below). On macOS below 14 (or without a
///   screen), watchOS and Linux it is a run-loop timer at ``framesPerSecond``.
/// - A cap is honoured as the display allows: the system picks a rate the display supports, at most the
///   cap (on a 60 Hz display, a 45 fps cap ticks at 30). On iPhones with ProMotion, rates above 60 need
///   `CADisableMinimumFrameDurationOnPhone` set to `YES` in the app's Info.plist; without it, 120 acts as 60.
/// - Idle costs nothing: when a tick leaves no work waiting, the clock pauses (no wake-ups, no battery);
///   the next request resumes it, and is delivered at the next frame boundary.
/// - Only the cadence changes: the animated-flag rules, `update()` (immediate) and the release rules of
///   the contexts are those of every scheduler.
///
/// > Important: Turns run on the main thread, whose run loop must run (an app's does; under
/// > `dispatchMain()` no run loop turns on Linux). Create schedulers, and read ``tickCount`` and
/// > ``isPaused``, on the main thread; requests may come from any thread.
public final class FramePacedScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `clock`, `tickCount` and `extraModes` are read and written on the main thread
    // only (the clock ticks there, `requestTurn` hops there, `prepare(modes:)` is guarded by a lock);
    // `framesPerSecond` is immutable.
    private nonisolated(unsafe) var clock: (any FrameClock)?
    private nonisolated(unsafe) var ticks = 0
    private let modes = Locked<Set<RunLoop.Mode>>([])
    /// How the clock runs on this system (decided once, at creation).
    package let plan: FrameClockPlan
    /// Makes the clock (the system's; a test's own, ticked by hand).
    private let makeClock: @Sendable (FrameClockPlan, Double, @escaping () -> Void) -> any FrameClock

    /// The main thread's frame-paced scheduler at the display's own rate (60 Hz where a timer stands in).
    /// Its clock is created on the main thread the first time it is needed.
    /// It is ``CoalescingScheduler/framePaced``.
    static let mainScheduler = FramePacedScheduler(
        label: DiagnosticLabel("frame-paced (main display)", file: #fileID, line: #line), framesPerSecond: 60,
        followsDisplay: true)

    /// The cap of the display link, and the rate of the timer where no display link is used.
    public let framesPerSecond: Double

    /// Whether the display link ticks at the display's own rate (``CoalescingScheduler/framePaced``) rather than capped at
    /// ``framesPerSecond``.
    public let followsDisplay: Bool

    /// Creates a scheduler pacing the main thread's deliveries at most `framesPerSecond` times a second.
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``CoalescingScheduler/label``); by default the creation site.
    ///   - framesPerSecond: The cap (a display link's rate, as the display allows) and the rate of the timer
    ///     where no display link is used; above 0 and at most 1 000 (else reported as misuse and clamped:
    ///     not finite or not above 0, 60; above 1 000, 1 000).
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public convenience init(
        label: String? = nil, framesPerSecond: Double = 60, file: StaticString = #fileID, line: UInt = #line
    ) {
        let label = DiagnosticLabel(label, file: file, line: line)
        self.init(
            label: label, framesPerSecond: Self.checkedRate(framesPerSecond, label: label, file: file, line: line),
            followsDisplay: false)
    }

    /// A rate out of range is reported as misuse (a debug build stops there) and clamped: not finite or not
    /// above 0, the default 60; above 1 000, 1 000.
    private static func checkedRate(_ framesPerSecond: Double, label: DiagnosticLabel, file: StaticString, line: UInt)
        -> Double
    {
        if framesPerSecond.isFinite && framesPerSecond > 0 && framesPerSecond <= 1_000 { return framesPerSecond }
        let clamped = framesPerSecond.isFinite && framesPerSecond > 1_000 ? 1_000 : 60.0
        Misuse.recoverable(
            "FramePacedScheduler(framesPerSecond:) needs a rate above 0 and at most 1 000; got \(framesPerSecond), "
                + "uses \(clamped)", label: label.string, file: file, line: line)
        return clamped
    }

    private convenience init(label: DiagnosticLabel, framesPerSecond: Double, followsDisplay: Bool) {
        self.init(
            label: label, framesPerSecond: framesPerSecond, followsDisplay: followsDisplay, display: .current,
            makeClock: { plan, rate, tick in makeFrameClock(plan: plan, framesPerSecond: rate, tick: tick) })
    }

    /// A scheduler for `display`, with clocks made by `makeClock` (tests pass their own, ticked by hand).
    package init(
        label: DiagnosticLabel = DiagnosticLabel(file: #fileID, line: #line), framesPerSecond: Double,
        followsDisplay: Bool, display: FrameClockPlan.Display,
        makeClock: @escaping @Sendable (FrameClockPlan, Double, @escaping () -> Void) -> any FrameClock
    ) {
        let framesPerSecond = Self.checkedRate(framesPerSecond, label: label, file: #fileID, line: #line)
        self.framesPerSecond = framesPerSecond
        self.followsDisplay = followsDisplay
        plan = FrameClockPlan.plan(framesPerSecond: framesPerSecond, followsDisplay: followsDisplay, display: display)
        self.makeClock = makeClock
        super.init(label: label, turnThread: .main, drivesPerFrameWork: true)
    }

    deinit {
        // The clock belongs to the main thread (a display link is invalidated on the thread whose run loop
        // it was added to). The last reference may go on any thread: hand the clock over there. Its tick
        // holds this scheduler weakly, so a frame that fires meanwhile does nothing.
        guard let clock else { return }
        if ThreadIdentity.isMainThread {
            clock.invalidate()
        } else {
            let handOver = ClockHandOver(clock)
            DispatchQueue.main.async { handOver.clock.invalidate() }
        }
    }

    public override var currentMode: RunLoop.Mode? {
        isCurrent ? RunLoop.current.currentMode : nil
    }

    public override func isCommon(_ mode: RunLoop.Mode) -> Bool {
        RunLoopScheduler.mainScheduler.isCommon(mode)
    }

    /// How many frames have ticked so far (each runs at most one turn). Main thread.
    public var tickCount: Int {
        if !isCurrent { fatalError("FramePacedScheduler.tickCount must be read on the main thread") }
        return ticks
    }

    /// Whether the clock is paused: nothing is waiting, so no frame ticks. Main thread.
    public var isPaused: Bool {
        if !isCurrent { fatalError("FramePacedScheduler.isPaused must be read on the main thread") }
        return clock?.isPaused ?? true
    }

    public override func prepare(modes requested: [RunLoop.Mode]) {
        let added = modes.insertNewCustomModes(requested)
        guard !added.isEmpty else { return }
        onMainThread { [self] in
            for mode in added { clock?.add(mode: mode) }
        }
    }

    /// Resumes the clock: the next frame turns. From another thread, the main thread is woken to do it.
    public override func requestTurn(insideTurn: Bool) {
        onMainThread { [self] in resume() }
    }

    /// Runs `body` on the main thread: now when called there; otherwise in the main loop's next pass in
    /// any mode the clock ticks in (the common modes and every mode work was enqueued for), so that a
    /// request from another thread resumes the clock while the main thread runs such a mode.
    private func onMainThread(_ body: @escaping @Sendable () -> Void) {
        if isCurrent {
            body()
        } else {
            RunLoop.main.perform(inModes: [.common] + modes.withLock { Array($0) }, block: body)
            CFRunLoopWakeUp(CFRunLoopGetMain())
        }
    }

    private func resume() {
        if clock == nil {
            let clock = makeClock(plan, framesPerSecond) { [weak self] in self?.tick() }
            for mode in modes.withLock({ $0 }) { clock.add(mode: mode) }
            self.clock = clock
        }
        clock?.isPaused = false
    }

    private func tick() {
        ticks += 1
        let mode = RunLoop.current.currentMode
        runTurn(mode: mode, isCommonMode: mode.map(isCommon) ?? true)
        // Work asked for during the turn (or by another thread since), and work parked for a mode this frame
        // did not admit, keep the clock running; otherwise it pauses until the next request, whose
        // `requestTurn` resumes it.
        if !hasRequestedTurn && !hasPendingWork { clock?.isPaused = true }
    }
}

/// Carries a clock to the main thread for invalidation (see `FramePacedScheduler.deinit`).
private struct ClockHandOver: @unchecked Sendable {
    // @unchecked Sendable: the clock is only touched again on the main thread, and nothing else holds it.
    let clock: any FrameClock
    init(_ clock: any FrameClock) { self.clock = clock }
}

extension CoalescingScheduler {
    /// The main thread, at most once per display frame (at the display's own rate where it has one; 60 Hz
    /// where a timer stands in).
    public static var framePaced: FramePacedScheduler { FramePacedScheduler.mainScheduler }
}
