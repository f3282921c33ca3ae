/// How a ``FramePacedScheduler``'s clock runs on one platform: the decision, apart from the clock, so that
/// every platform's branch is tested on Linux.
package enum FrameClockPlan: Equatable, Sendable {
    /// A display link at the display's own rate (`.framePaced`).
    case displayLink
    /// A display link capped with `preferredFrameRateRange` (iOS/tvOS 15, visionOS, macOS 14).
    case displayLinkRange(minimum: Float, maximum: Float, preferred: Float)
    /// A display link capped with `preferredFramesPerSecond` (iOS/tvOS 13–14).
    case displayLinkFramesPerSecond(Int)
    /// A run-loop timer ticking this many times a second (macOS below 14 or without a screen, watchOS,
    /// Linux).
    case timer(framesPerSecond: Double)

    /// Whether a display link carries it out (every plan but the timer).
    package var usesDisplayLink: Bool {
        if case .timer = self { return false }
        return true
    }

    /// What a platform offers for frame pacing.
    package enum Display: Equatable, Sendable {
        /// No display link: a timer stands in.
        case none
        /// A display link whose rate is set with `preferredFramesPerSecond` only (iOS/tvOS 13–14).
        case framesPerSecondOnly
        /// A display link with `preferredFrameRateRange`.
        case frameRateRange
    }

    /// The plan for `display`.
    ///
    /// - Parameters:
    ///   - framesPerSecond: The cap (and the timer's rate where no display link exists).
    ///   - followsDisplay: `true` for the display's own rate (the display link is not capped).
    package static func plan(framesPerSecond: Double, followsDisplay: Bool, display: Display) -> FrameClockPlan {
        switch display {
        case .none:
            return .timer(framesPerSecond: framesPerSecond)
        case _ where followsDisplay:
            return .displayLink
        case .framesPerSecondOnly:
            // The system rounds down to a rate the display supports; at least one frame a second.
            return .displayLinkFramesPerSecond(max(1, Int(framesPerSecond.rounded(.down))))
        case .frameRateRange:
            // A cap, not an exact rate: the system picks a rate the display supports within the range, so
            // the range reaches down to half the cap (30 Hz for a 45 Hz cap on a 60 Hz display, where an
            // exact 45 would be rounded up to 60).
            let cap = Float(framesPerSecond)
            return .displayLinkRange(minimum: cap / 2, maximum: cap, preferred: cap)
        }
    }
}
