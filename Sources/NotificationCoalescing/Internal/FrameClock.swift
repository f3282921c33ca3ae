import CoreFoundation
import Foundation

#if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS))
import QuartzCore
#endif

/// What ticks a ``FramePacedScheduler``: once per display frame, and not at all while paused.
///
/// Created, paused, resumed and invalidated on the main thread only; `tick` is called there.
protocol FrameClock: AnyObject {
    var isPaused: Bool { get set }
    /// Makes the clock tick in `mode` too (it ticks in the common modes from the start).
    func add(mode: RunLoop.Mode)
    func invalidate()
}

/// The clock for this platform: a display link where the system offers one at the package's minimums
/// (iOS, tvOS, visionOS), a run-loop timer at `framesPerSecond` elsewhere (macOS 10.15 has no display
/// link in AppKit before macOS 14, watchOS none at all, Linux no display).
func makeFrameClock(framesPerSecond: Double, tick: @escaping () -> Void) -> any FrameClock {
    #if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS))
    DisplayLinkClock(tick: tick)
    #else
    TimerClock(framesPerSecond: framesPerSecond, tick: tick)
    #endif
}

/// A repeating run-loop timer in the common modes, paused by moving its next fire date to the far
/// future and resumed at the next frame boundary (frames keep one phase, so a request made after a
/// long pause is delivered within one frame, never at a random point in between).
final class TimerClock: FrameClock {
    private var timer: CFRunLoopTimer?
    private let interval: CFTimeInterval
    private let origin: CFAbsoluteTime
    private(set) var isRunning = false

    init(framesPerSecond: Double, tick: @escaping () -> Void) {
        interval = 1 / framesPerSecond
        origin = CFAbsoluteTimeGetCurrent()
        let timer = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, .greatestFiniteMagnitude, interval, 0, 0) {
            _ in
            tick()
        }
        self.timer = timer
        CFRunLoopAddTimer(CFRunLoopGetMain(), timer, commonModesName)
    }

    var isPaused: Bool {
        get { !isRunning }
        set {
            guard let timer, newValue == isRunning else { return }
            isRunning = !newValue
            if newValue {
                CFRunLoopTimerSetNextFireDate(timer, .greatestFiniteMagnitude)
            } else {
                let now = CFAbsoluteTimeGetCurrent()
                let frames = ((now - origin) / interval).rounded(.up)
                CFRunLoopTimerSetNextFireDate(timer, max(now, origin + frames * interval))
            }
        }
    }

    func add(mode: RunLoop.Mode) {
        if let timer { CFRunLoopAddTimer(CFRunLoopGetMain(), timer, runLoopModeName(mode)) }
    }

    func invalidate() {
        if let timer { CFRunLoopTimerInvalidate(timer) }
        timer = nil
        isRunning = false
    }
}

#if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS))
/// A `CADisplayLink` on the main run loop's common modes: one tick per display refresh, paused when idle.
final class DisplayLinkClock: NSObject, FrameClock {
    private var link: CADisplayLink?
    private let tick: () -> Void

    init(tick: @escaping () -> Void) {
        self.tick = tick
        super.init()
        // The link holds its target strongly; `invalidate()` (in the scheduler's deinit) breaks the cycle.
        let link = CADisplayLink(target: self, selector: #selector(step(_:)))
        link.isPaused = true
        link.add(to: .main, forMode: .common)
        self.link = link
    }

    @objc private func step(_ link: CADisplayLink) {
        tick()
    }

    var isPaused: Bool {
        get { link?.isPaused ?? true }
        set { link?.isPaused = newValue }
    }

    func add(mode: RunLoop.Mode) {
        link?.add(to: .main, forMode: mode)
    }

    func invalidate() {
        link?.invalidate()
        link = nil
    }
}
#endif
