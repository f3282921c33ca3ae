/// How a delivery animates its changes: a curve or a spring, a duration, a delay. A value that every
/// platform reads in its own terms (``UpdateTransaction/animate(_:)``).
///
/// The parameters are SwiftUI's: `.easeInOut(duration: 0.3)`, `.spring(duration: 0.5, bounce: 0.2)`.
///
/// ```swift
/// let context = ViewUpdatingContext()
/// context.setNeedsUpdate(transaction: UpdateTransaction(animation: .spring(duration: 0.4, bounce: 0.2)))
/// withUpdateAnimation(.easeOut(duration: 0.2).delay(0.1)) {
///     context.setNeedsUpdate()               // carries the ease-out
/// }
/// ```
///
/// > Important: Durations and delays must be finite and not negative, and a bounce finite and between -1
/// > and 1; anything else stops on a precondition that names the parameter.
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
    }

    /// The curve.
    public let curve: Curve
    /// How long the animation runs, in seconds (for a spring, its perceptual duration).
    public let duration: Double
    /// How long it waits before it starts, in seconds.
    public let delay: Double

    private init(curve: Curve, duration: Double, delay: Double = 0) {
        Self.check(duration, "duration")
        Self.check(delay, "delay")
        if case .spring(let bounce) = curve {
            precondition(
                bounce.isFinite && (-1...1).contains(bounce),
                "UpdateAnimation.spring: bounce must be finite and between -1 and 1 (got \(bounce))")
        }
        self.curve = curve
        self.duration = duration
        self.delay = delay
    }

    private static func check(_ value: Double, _ name: String) {
        precondition(
            value.isFinite && value >= 0,
            "UpdateAnimation: \(name) must be finite and not negative (got \(value))")
    }

    /// The platform's default animation, 0.35 s (the duration of UIKit's and SwiftUI's defaults).
    public static let `default` = UpdateAnimation(curve: .default, duration: 0.35)

    public static func linear(duration: Double = 0.35) -> UpdateAnimation {
        UpdateAnimation(curve: .linear, duration: duration)
    }

    public static func easeIn(duration: Double = 0.35) -> UpdateAnimation {
        UpdateAnimation(curve: .easeIn, duration: duration)
    }

    public static func easeOut(duration: Double = 0.35) -> UpdateAnimation {
        UpdateAnimation(curve: .easeOut, duration: duration)
    }

    public static func easeInOut(duration: Double = 0.35) -> UpdateAnimation {
        UpdateAnimation(curve: .easeInOut, duration: duration)
    }

    /// A spring with SwiftUI's parameters: `duration` (perceptual, 0.5 s by default) and `bounce` (0: no
    /// bounce; -1...1).
    public static func spring(duration: Double = 0.5, bounce: Double = 0) -> UpdateAnimation {
        UpdateAnimation(curve: .spring(bounce: bounce), duration: duration)
    }

    /// The same animation, starting `delay` seconds later.
    public func delay(_ delay: Double) -> UpdateAnimation {
        UpdateAnimation(curve: curve, duration: duration, delay: delay)
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
        }
        return delay > 0 ? "\(base).delay(\(delay))" : base
    }
}
