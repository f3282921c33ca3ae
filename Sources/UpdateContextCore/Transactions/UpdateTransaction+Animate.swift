import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

extension UpdateTransaction {
    /// Performs `changes` inside the platform's animation for ``animation``, or directly when it has none
    /// (or where the platform has no view animation, such as Linux and watchOS).
    ///
    /// Call it from an updater with the delivery's transaction: the delivery's completions then wait until
    /// the animation ends (and learn whether it finished). Main thread.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext()
    /// updateContext.onUpdateWithTransaction { transaction in
    ///     transaction.animate { /* set view properties */ }
    /// }
    /// ```
    ///
    /// - UIKit: `UIView.animate` with the curve, the duration and the delay; springs with the iOS 17 spring
    ///   API (`springDuration:bounce:`), and below iOS 17 with a damping ratio of `1 - bounce`.
    /// - AppKit: `NSAnimationContext.runAnimationGroup` with the duration and a timing function, implicit
    ///   animation allowed (use `view.animator()` or layer-backed views); a spring animates ease-in-out; a
    ///   delay starts the group later.
    public func animate(_ changes: @escaping () -> Void) {
        guard let animation else {
            changes()
            return
        }
        let group = self.group
        group?.enter()
        Self.run(animation, changes) { finished in group?.leave(finished: finished) }
    }

    #if canImport(UIKit) && !os(watchOS)
    private static func run(
        _ animation: UpdateAnimation, _ changes: @escaping () -> Void, completion: @escaping (Bool) -> Void
    ) {
        // nonisolated(unsafe): called on the main thread (inside a delivery), where `assumeIsolated` runs
        // its body in place; the closures never leave it.
        nonisolated(unsafe) let changes = changes
        nonisolated(unsafe) let completion = completion
        MainActor.assumeIsolated {
            // iOS 26: `.flushUpdates` applies the updates the changes invalidate (layout, properties)
            // inside the animation, as UIKit 26 recommends over `.layoutSubviews`.
            var common: UIView.AnimationOptions = [.allowUserInteraction]
            #if canImport(UIKit, _version: 9000)
            if #available(iOS 26, tvOS 26, visionOS 26, *) { common.insert(.flushUpdates) }
            #endif
            let options: UIView.AnimationOptions
            switch animation.curve {
            case .default, .easeInOut: options = common.union(.curveEaseInOut)
            case .linear: options = common.union(.curveLinear)
            case .easeIn: options = common.union(.curveEaseIn)
            case .easeOut: options = common.union(.curveEaseOut)
            case .keyboard(let curve):
                // The raw curve in the options' curve bits, as UIKit documents for its four curves: the
                // keyboard's own (7) animates exactly as the keyboard does.
                options = common.union(UIView.AnimationOptions(rawValue: UInt(curve) << 16))
            case .spring(let bounce):
                if #available(iOS 17, tvOS 17, visionOS 1, *) {
                    UIView.animate(
                        springDuration: animation.duration, bounce: bounce, initialSpringVelocity: 0,
                        delay: animation.delay, options: common, animations: changes, completion: completion)
                } else {
                    UIView.animate(
                        withDuration: animation.duration, delay: animation.delay,
                        usingSpringWithDamping: min(1, max(0.01, 1 - bounce)), initialSpringVelocity: 0,
                        options: common, animations: changes, completion: completion)
                }
                return
            }
            UIView.animate(
                withDuration: animation.duration, delay: animation.delay, options: options, animations: changes,
                completion: completion)
        }
    }
    #elseif canImport(AppKit)
    private static func run(
        _ animation: UpdateAnimation, _ changes: @escaping () -> Void, completion: @escaping (Bool) -> Void
    ) {
        nonisolated(unsafe) let changes = changes
        nonisolated(unsafe) let completion = completion
        // nonisolated(unsafe): the group starts on the main thread, now or from the main queue.
        nonisolated(unsafe) let start = {
            NSAnimationContext.runAnimationGroup(
                { context in
                    context.duration = animation.duration
                    context.allowsImplicitAnimation = true
                    context.timingFunction = animation.curve.timingFunction
                    changes()
                }, completionHandler: { completion(true) })
        }
        if animation.delay > 0 {
            DispatchQueue.main.asyncAfter(deadline: .now() + animation.delay) { start() }
        } else {
            start()
        }
    }

    #else
    /// No view animation here: the changes run at once, and the animation counts as finished.
    private static func run(
        _ animation: UpdateAnimation, _ changes: @escaping () -> Void, completion: @escaping (Bool) -> Void
    ) {
        changes()
        completion(true)
    }
    #endif
}

#if canImport(QuartzCore)
import QuartzCore

extension UpdateAnimation.Curve {
    /// The curve as Core Animation times it (a spring as ease-in-out; the keyboard's curve 7 as an
    /// approximation of it).
    package var timingFunction: CAMediaTimingFunction {
        switch self {
        case .linear: CAMediaTimingFunction(name: .linear)
        case .easeIn: CAMediaTimingFunction(name: .easeIn)
        case .easeOut: CAMediaTimingFunction(name: .easeOut)
        case .default: CAMediaTimingFunction(name: .default)
        case .easeInOut, .spring: CAMediaTimingFunction(name: .easeInEaseOut)
        case .keyboard(let curve):
            switch curve {
            case 0: CAMediaTimingFunction(name: .easeInEaseOut)
            case 1: CAMediaTimingFunction(name: .easeIn)
            case 2: CAMediaTimingFunction(name: .easeOut)
            case 3: CAMediaTimingFunction(name: .linear)
            default: CAMediaTimingFunction(controlPoints: 0.38, 0.7, 0.125, 1)
            }
        }
    }
}

#endif
