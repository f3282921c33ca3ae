import CoreFoundation
import Foundation

#if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS) || os(macOS))
import QuartzCore
#endif
#if canImport(AppKit) && os(macOS)
import AppKit
#endif

/// What ticks a ``FramePacedScheduler``: once per display frame, and not at all while paused.
///
/// Created, paused, resumed and invalidated on the main thread only; `tick` is called there.
package protocol FrameClock: AnyObject {
    var isPaused: Bool { get set }
    /// Makes the clock tick in `mode` too (it ticks in the common modes from the start).
    func add(mode: RunLoop.Mode)
    func invalidate()
}

extension FrameClockPlan.Display {
    /// What this system offers: a display link where UIKit has one (with `preferredFrameRateRange` from
    /// iOS/tvOS 15 and on visionOS), AppKit's from macOS 14, none on watchOS and Linux.
    package static var current: Self {
        #if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS))
        if #available(iOS 15, tvOS 15, *) { return .frameRateRange }
        return .framesPerSecondOnly
        #elseif canImport(QuartzCore) && canImport(AppKit) && os(macOS)
        if #available(macOS 14, *) { return .frameRateRange }
        return .none
        #else
        return .none
        #endif
    }
}

/// The clock that carries out `plan` on this system. A display-link plan that the system cannot carry
/// out (macOS without a screen) falls back to a timer at `framesPerSecond`.
func makeFrameClock(plan: FrameClockPlan, framesPerSecond: Double, tick: @escaping () -> Void) -> any FrameClock {
    #if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS))
    if plan.usesDisplayLink {
        return DisplayLinkClock(plan: plan, tick: tick)
    }
    #elseif canImport(QuartzCore) && canImport(AppKit) && os(macOS)
    if #available(macOS 14, *), plan.usesDisplayLink,
        let clock = DisplayLinkClock(screenPlan: plan, tick: tick)
    {
        return clock
    }
    #endif
    return TimerClock(framesPerSecond: framesPerSecond, tick: tick)
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

#if canImport(QuartzCore) && (os(iOS) || os(tvOS) || os(visionOS) || os(macOS))
/// A `CADisplayLink` on the main run loop's common modes, paused when idle: one tick per display refresh,
/// or fewer as its plan caps it.
@available(macOS 14, *)
final class DisplayLinkClock: NSObject, FrameClock, @unchecked Sendable {
    // @unchecked Sendable: confined to the main thread — created, ticked, paused and invalidated there (see
    // `FrameClock`); it crosses into `MainActor.assumeIsolated` on that same thread only.
    private var link: CADisplayLink?
    private let tick: () -> Void

    #if os(iOS) || os(tvOS) || os(visionOS)
    init(plan: FrameClockPlan, tick: @escaping () -> Void) {
        self.tick = tick
        super.init()
        // The link holds its target strongly; `invalidate()` (in the scheduler's deinit) breaks the cycle.
        let link = CADisplayLink(target: self, selector: #selector(step(_:)))
        Self.apply(plan, to: link)
        start(link)
    }
    #endif

    #if os(macOS)
    /// AppKit's display link, from the main screen (macOS 14); `nil` without a screen.
    init?(screenPlan plan: FrameClockPlan, tick: @escaping () -> Void) {
        self.tick = tick
        super.init()
        // Created on the main thread (the scheduler's clock lives there); AppKit's screens are main-actor.
        let started = MainActor.assumeIsolated { () -> Bool in
            guard let link = NSScreen.main?.displayLink(target: self, selector: #selector(step(_:))) else {
                return false
            }
            Self.apply(plan, to: link)
            start(link)
            return true
        }
        if !started { return nil }
    }
    #endif

    private func start(_ link: CADisplayLink) {
        link.isPaused = true
        link.add(to: .main, forMode: .common)
        self.link = link
    }

    private static func apply(_ plan: FrameClockPlan, to link: CADisplayLink) {
        switch plan {
        case .displayLinkRange(let minimum, let maximum, let preferred):
            #if os(macOS)
            link.preferredFrameRateRange = CAFrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
            #else
            if #available(iOS 15, tvOS 15, *) {
                link.preferredFrameRateRange = CAFrameRateRange(
                    minimum: minimum, maximum: maximum, preferred: preferred)
            }
            #endif
        case .displayLinkFramesPerSecond(let rate):
            #if !os(macOS)
            link.preferredFramesPerSecond = rate
            #endif
        case .displayLink, .timer:
            break
        }
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
