import CoalescingRuntime

/// How a delivery animates its changes: a curve or a spring, a duration, a delay. A value that every
/// platform reads in its own terms (``UpdateTransaction/animate(_:)``).
///
/// The parameters are SwiftUI's: `.easeInOut(duration: 0.3)`, `.spring(duration: 0.5, bounce: 0.2)`.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// let updateContext = ViewUpdatingContext()
/// updateContext.setNeedsUpdate(transaction: UpdateTransaction(animation: .spring(duration: 0.4, bounce: 0.2)))
/// withUpdateAnimation(.easeOut(duration: 0.2).delay(0.1)) {
///     updateContext.setNeedsUpdate()               // carries the ease-out
/// }
/// ```
///
/// > Important: Durations and delays must be finite and not negative, and a bounce finite and between -1
/// > and 1. A number out of range never stops a release build: it is clamped (a duration or delay to 0, a
/// > bounce into -1...1, NaN to 0) and reported as misuse (`UpdateDiagnostics`, naming the parameter and the
/// > caller's line); a debug build stops there, as `assertionFailure` does.
public struct UpdateAnimation: Sendable, Hashable, CustomStringConvertible {
    /// The shape of the animation's progress over time.
    public enum Curve: Sendable, Hashable {
        /// The platform's default animation (UIKit's `UIView.animate` default curve; AppKit's default
        /// timing).
        case `default`
        case linear
        case easeIn
        case easeOut
        case easeInOut
        /// A spring that settles within the duration; `bounce` 0 is critically damped, up to 1 bouncier,
        /// below 0 overdamped (SwiftUI's parameters).
        case spring(bounce: Double)
        /// The curve UIKit hands with the keyboard's notifications and messages, as the raw value of
        /// `UIView.AnimationCurve` (0 ease-in-out, 1 ease-in, 2 ease-out, 3 linear; 7, the keyboard's own,
        /// has no name): UIKit animates with that very curve, so that a change moves in step with the
        /// keyboard; elsewhere the four named ones map to their curves and any other to an approximation of
        /// the keyboard's (a cubic Bézier curve through (0.38, 0.7) and (0.125, 1)).
        case keyboard(curve: Int)
    }

    /// The curve.
    public let curve: Curve
    /// How long the animation runs, in seconds (for a spring, its perceptual duration).
    public let duration: Double
    /// How long it waits before it starts, in seconds.
    public let delay: Double

    private init(
        _ api: String, curve: Curve, duration: Double, delay: Double = 0, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        var curve = curve
        if case .spring(let bounce) = curve, !(bounce.isFinite && (-1...1).contains(bounce)) {
            Misuse.recoverable(
                "UpdateAnimation.\(api): bounce must be finite and between -1 and 1 (got \(bounce)); "
                    + "it is clamped to -1...1 (NaN: 0)", file: file, line: line)
            curve = .spring(bounce: bounce.isNaN ? 0 : min(max(bounce, -1), 1))
        }
        self.curve = curve
        self.duration = Self.checked(duration, "duration", api, file: file, line: line)
        self.delay = Self.checked(delay, "delay", api, file: file, line: line)
    }

    /// `value`, or 0 (reported as misuse) when it is negative or not finite.
    private static func checked(_ value: Double, _ name: String, _ api: String, file: StaticString, line: UInt)
        -> Double
    {
        if value.isFinite && value >= 0 { return value }
        Misuse.recoverable(
            "UpdateAnimation.\(api): \(name) must be finite and not negative (got \(value)); it is 0 instead",
            file: file, line: line)
        return 0
    }

    /// The platform's default animation, 0.35 s (the duration of UIKit's and SwiftUI's defaults).
    public static let `default` = UpdateAnimation("default", curve: .default, duration: 0.35)

    /// A constant-speed animation of `duration` seconds.
    ///
    /// - Parameters:
    ///   - duration: Finite and not negative (else 0, reported as misuse).
    ///   - file: The caller's file (`#fileID`), named by the report of a bad duration.
    ///   - line: The caller's line.
    public static func linear(duration: Double = 0.35, file: StaticString = #fileID, line: UInt = #line)
        -> UpdateAnimation
    {
        UpdateAnimation("linear(duration:)", curve: .linear, duration: duration, file: file, line: line)
    }

    /// An animation that starts slowly, of `duration` seconds (finite, not negative; see ``linear(duration:file:line:)``).
    public static func easeIn(duration: Double = 0.35, file: StaticString = #fileID, line: UInt = #line)
        -> UpdateAnimation
    {
        UpdateAnimation("easeIn(duration:)", curve: .easeIn, duration: duration, file: file, line: line)
    }

    /// An animation that ends slowly, of `duration` seconds (finite, not negative; see ``linear(duration:file:line:)``).
    public static func easeOut(duration: Double = 0.35, file: StaticString = #fileID, line: UInt = #line)
        -> UpdateAnimation
    {
        UpdateAnimation("easeOut(duration:)", curve: .easeOut, duration: duration, file: file, line: line)
    }

    /// An animation that starts and ends slowly, of `duration` seconds (finite, not negative; see
    /// ``linear(duration:file:line:)``).
    public static func easeInOut(duration: Double = 0.35, file: StaticString = #fileID, line: UInt = #line)
        -> UpdateAnimation
    {
        UpdateAnimation("easeInOut(duration:)", curve: .easeInOut, duration: duration, file: file, line: line)
    }

    /// A spring with SwiftUI's parameters: `duration` (perceptual, 0.5 s by default; finite, not negative)
    /// and `bounce` (0: no bounce; finite, -1...1). A bad value is clamped and reported as misuse, naming the
    /// caller's line.
    public static func spring(
        duration: Double = 0.5, bounce: Double = 0, file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateAnimation {
        UpdateAnimation(
            "spring(duration:bounce:)", curve: .spring(bounce: bounce), duration: duration, file: file, line: line)
    }

    /// The keyboard's own animation: its `duration` and `curve`, the raw value of `UIView.AnimationCurve` that
    /// UIKit hands with every keyboard notification and message (7 for the keyboard's own curve), on every
    /// platform; see ``Curve/keyboard(curve:)``. With UIKit, `keyboard(duration:curve:)` also takes the
    /// `UIView.AnimationCurve` itself, and `keyboard(_:)` a keyboard message.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let slide = UpdateAnimation.keyboard(duration: 0.25, curve: 7)
    /// ```
    ///
    /// - Parameters:
    ///   - duration: Finite and not negative (else 0, reported as misuse).
    ///   - curve: 0...15 (what `UIView.AnimationOptions` can carry). Anything else is the keyboard's own curve,
    ///     7, reported as misuse naming the caller's line.
    ///   - file: The caller's file (`#fileID`), named by the report of a bad value.
    ///   - line: The caller's line.
    public static func keyboard(duration: Double, curve: Int, file: StaticString = #fileID, line: UInt = #line)
        -> UpdateAnimation
    {
        var curve = curve
        if !(0...15).contains(curve) {
            Misuse.recoverable(
                "UpdateAnimation.keyboard(duration:curve:): curve must be a UIView.AnimationCurve raw value, 0...15 "
                    + "(got \(curve)); the keyboard's own curve, 7, is used instead", file: file, line: line)
            curve = 7
        }
        return UpdateAnimation(
            "keyboard(duration:curve:)", curve: .keyboard(curve: curve), duration: duration, file: file, line: line)
    }

    /// The same animation, starting `delay` seconds later (finite, not negative: a bad value is 0, reported as
    /// misuse naming the caller's line).
    public func delay(_ delay: Double, file: StaticString = #fileID, line: UInt = #line) -> UpdateAnimation {
        UpdateAnimation("delay(_:)", curve: curve, duration: duration, delay: delay, file: file, line: line)
    }

    public var description: String {
        let base: String
        switch curve {
        case .default: base = "default(\(duration))"
        case .linear: base = "linear(\(duration))"
        case .easeIn: base = "easeIn(\(duration))"
        case .easeOut: base = "easeOut(\(duration))"
        case .easeInOut: base = "easeInOut(\(duration))"
        case .spring(let bounce): base = "spring(\(duration), bounce: \(bounce))"
        case .keyboard(let curve): base = "keyboard(\(duration), curve: \(curve))"
        }
        return delay > 0 ? "\(base).delay(\(delay))" : base
    }
}
