#if canImport(QuartzCore)
import QuartzCore
import UpdateContextCore

extension UpdateTransaction {
    /// Performs `changes` to Core Animation layers in a `CATransaction` with ``animation``'s duration and
    /// timing (a spring times as ease-in-out; Core Animation's implicit animations have no delay), or
    /// with actions disabled when it has none. The delivery's completions wait for the transaction's
    /// completion block. Main thread.
    public func animateLayers(_ changes: () -> Void) {
        CATransaction.begin()
        if let animation {
            let group = self.group
            group?.enter()
            CATransaction.setAnimationDuration(animation.duration)
            CATransaction.setAnimationTimingFunction(animation.curve.timingFunction)
            // Core Animation calls the block on the main thread, where the group lives.
            CATransaction.setCompletionBlock { group?.leave() }
        } else {
            CATransaction.setDisableActions(true)
        }
        changes()
        CATransaction.commit()
    }
}
#endif
