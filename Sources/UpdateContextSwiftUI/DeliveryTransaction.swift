import UpdateContext

#if canImport(SwiftUI)
import SwiftUI

extension UpdateAnimation {
    /// The same animation in SwiftUI's terms: a spring with SwiftUI's `duration` and `bounce` (iOS 17;
    /// below, `response` and a damping fraction of `1 - bounce`), the curves with their durations, and the
    /// delay.
    public var swiftUIAnimation: Animation {
        let base: Animation
        switch curve {
        case .default: base = .easeInOut(duration: duration)
        case .linear: base = .linear(duration: duration)
        case .easeIn: base = .easeIn(duration: duration)
        case .easeOut: base = .easeOut(duration: duration)
        case .easeInOut: base = .easeInOut(duration: duration)
        case .keyboard(let curve):
            switch curve {
            case 0: base = .easeInOut(duration: duration)
            case 1: base = .easeIn(duration: duration)
            case 2: base = .easeOut(duration: duration)
            case 3: base = .linear(duration: duration)
            default: base = .timingCurve(0.38, 0.7, 0.125, 1, duration: duration)  // the keyboard's, approximated
            }
        case .spring(let bounce):
            if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
                base = .spring(duration: duration, bounce: bounce)
            } else {
                base = .spring(response: duration, dampingFraction: min(1, max(0.01, 1 - bounce)))
            }
        }
        return delay > 0 ? base.delay(delay) : base
    }
}

extension UpdateTransaction {
    /// The same transaction as SwiftUI's: its animation (``UpdateAnimation/swiftUIAnimation``), and
    /// animations disabled when it has none.
    public var swiftUITransaction: Transaction {
        var transaction = Transaction(animation: animation?.swiftUIAnimation)
        transaction.disablesAnimations = animation == nil
        return transaction
    }
}
#endif

/// Runs `body` — a face announcing a delivery — in a SwiftUI transaction that carries the delivery's
/// animation (its transaction's, or the default one); a non-animated delivery disables animations. Where
/// SwiftUI does not exist, runs `body`.
///
/// Main thread (inside the delivery).
func withDeliveryTransaction(_ delivery: ContextDelivery, _ body: () -> Void) {
    #if canImport(SwiftUI)
    withTransaction(UpdateTransaction(animation: delivery.animation).swiftUITransaction, body)
    #else
    body()
    #endif
}
