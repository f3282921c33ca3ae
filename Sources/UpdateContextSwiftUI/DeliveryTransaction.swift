import UpdateContext

#if canImport(SwiftUI)
import SwiftUI
#endif

/// Runs `body` — a face announcing a delivery — in a SwiftUI transaction that carries the delivery's
/// animated flag: an animated delivery animates with `Animation.default` what the announcement
/// invalidates; a non-animated one disables animations. Where SwiftUI does not exist, runs `body`.
///
/// Main thread (inside the delivery).
func withDeliveryTransaction(animated: Bool, _ body: () -> Void) {
    #if canImport(SwiftUI)
    var transaction = Transaction(animation: animated ? .default : nil)
    transaction.disablesAnimations = !animated
    withTransaction(transaction, body)
    #else
    body()
    #endif
}
