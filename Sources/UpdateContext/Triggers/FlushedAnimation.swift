import CoalescingRuntime
import UpdateContextCore

extension ViewUpdatingContext {
    /// Animates `changes` and only them, the way UIKit 26's `.flushUpdates` animation option does, from
    /// iOS 13 / macOS 10.15 and on Linux.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// final class Model { var isExpanded = false }
    ///
    /// let updateContext = ViewUpdatingContext()
    /// let model = Model()
    /// updateContext.onUpdate { animated in print("render; animated:", animated) }
    ///
    /// updateContext.setNeedsUpdate()                       // an earlier change, not to be animated
    /// updateContext.animateWithFlushedUpdates(using: { animations in
    ///     animations()                               // UIKit: UIView.animate(withDuration: 0.3, animations: animations)
    /// }) {
    ///     model.isExpanded = true
    ///     updateContext.setNeedsUpdate()                   // delivered inside the animation, animated
    /// }
    /// ```
    ///
    /// In order, on the main thread:
    /// 1. ``updateIfNeeded(file:line:)``: what was requested before — earlier changes — is delivered now, outside the
    ///    animation, with the flag the rules give it, so it is not swept into the animation; and what that
    ///    delivery's updaters asked again is delivered too, once.
    /// 2. `animate` is called with a block that runs `changes`, then delivers what they requested at once,
    ///    inside the animation, with `animated: true` (``update(animated:file:line:)``).
    /// 3. ``updateIfNeeded(file:line:)`` again: what the animated delivery requested is delivered after the
    ///    animation block, not in it.
    ///
    /// Only what `changes` requested is animated. When step 1 cannot deliver — the context is suspended,
    /// this is called from inside one of its updaters, or its updaters ask again every time — the earlier
    /// requests stay pending, what `changes` request is applied after them as it would be without this
    /// wrapper, and `setNeedsUpdate(animated: true)` is added after that, so the rules keep the earlier
    /// non-animated changes from animating: inside an updater, the next cycle delivers them
    /// without animation at once and then the new ones animated; while suspended, ``resume(file:line:)`` delivers
    /// them all once, with the flag the rules give them in the order they were made (an earlier non-animated
    /// request keeps the delivery unanimated unless a later `update(animated:)` sets the flag). `changes` that
    /// request nothing add nothing.
    ///
    /// - Parameters:
    ///   - animate: Runs its `animations` block in an animation before it returns (`UIView.animate`,
    ///     `NSAnimationContext.runAnimationGroup`, SwiftUI's `withAnimation`). One that does not call the
    ///     block before returning is a programming error: it stops the program, in every build, with a
    ///     message naming the caller's line.
    ///   - changes: The changes to animate; they request updates as usual.
    ///   - file: The caller's file (`#fileID`), named by a misuse message.
    ///   - line: The caller's line, named by a misuse message.
    ///
    /// > Important: Main thread only: called elsewhere it stops the program, in every build, naming the
    /// > caller's line.
    public func animateWithFlushedUpdates(
        using animate: (_ animations: @escaping () -> Void) -> Void,
        file: StaticString = #fileID, line: UInt = #line,
        _ changes: @escaping () -> Void
    ) {
        flushingEarlierUpdates(
            "animateWithFlushedUpdates(using:_:)", file: file, line: line, in: animate, changes,
            request: { [self] kept in kept ? setNeedsUpdate(animated: true) : update(animated: true) },
            nothingRequested: {})
    }

    /// The steps of a flushed animation, for each of its forms: (1) what was requested before is delivered
    /// now, outside the animation; (2) inside `animate`, `changes` run, and what they requested is asked
    /// for by `request` — with `kept` when step 1 could not deliver (suspended, or inside an updater), so
    /// that the earlier requests stay pending before it — or, when they requested nothing,
    /// `nothingRequested` runs; (3) what that delivery's updaters requested is delivered after the block.
    func flushingEarlierUpdates(
        _ api: String, file: StaticString, line: UInt,
        in animate: (_ animations: @escaping () -> Void) -> Void, _ changes: @escaping () -> Void,
        request: @escaping (_ kept: Bool) -> Void, nothingRequested: @escaping () -> Void
    ) {
        if !storage.isOnSchedulerThread {
            Misuse.unrecoverable("ViewUpdatingContext.\(api) must be called on the main thread", file: file, line: line)
        }
        updateIfNeeded(file: file, line: line)
        // What step 1's updaters asked is delivered too, once, before `changes` run: made after the changes, its
        // delivery (the rules' early flush of a non-animated request) would show them without animation.
        if isUpdatePending && !storage.isDelivering && !storage.isSuspended {
            updateIfNeeded(file: file, line: line)
        }
        let ran = RanFlag()
        // What step 1 could not deliver is still pending: then only what `changes` requested may join the
        // animated request, and it is not delivered now.
        let keptEarlierRequests = isUpdatePending
        animate { [self] in
            ran.value = true
            let requested: Bool
            if keptEarlierRequests {
                requested = storage.requestsMade(during: changes)
            } else {
                changes()
                requested = isUpdatePending
            }
            if requested { request(keptEarlierRequests) } else { nothingRequested() }
        }
        if !ran.value {
            Misuse.unrecoverable(
                "ViewUpdatingContext.\(api): `animate` must call its animations block before it returns", file: file,
                line: line)
        }
        updateIfNeeded(file: file, line: line)
    }
}

extension ViewUpdatingContext {
    /// ``animateWithFlushedUpdates(using:file:line:_:)`` with a transaction instead of an animator: what was
    /// requested before is delivered now, outside the animation; then `changes` run, and what they
    /// requested is delivered at once with `transaction` — its updaters animate through it
    /// (``animateChanges(_:)``, ``UpdateTransaction/animate(_:)``) — and its completions run after that
    /// animation. When the first step cannot deliver (suspended, or inside an updater), what `changes`
    /// request is applied after the earlier requests, and a request with `transaction` after that, as the
    /// rules keep them. When
    /// `changes` request nothing, the completions are told at once that nothing was shown
    /// (``UpdateCompletion/DropReason/nothingRequested``).
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// final class Model { var isExpanded = false }
    /// let updateContext = ViewUpdatingContext()
    /// let model = Model()
    /// updateContext.animateWithFlushedUpdates(transaction: UpdateTransaction(animation: .easeInOut(duration: 0.3))) {
    ///     model.isExpanded = true
    ///     updateContext.setNeedsUpdate()
    /// }
    /// ```
    ///
    /// Main thread: called elsewhere it stops the program, in every build, naming the caller's line.
    public func animateWithFlushedUpdates(
        transaction: UpdateTransaction, file: StaticString = #fileID, line: UInt = #line,
        _ changes: () -> Void
    ) {
        withoutActuallyEscaping(changes) { changes in
            flushingEarlierUpdates(
                "animateWithFlushedUpdates(transaction:_:)", file: file, line: line, in: { $0() }, changes,
                request: { [self] kept in
                    kept
                        ? setNeedsUpdate(transaction: transaction)
                        : update(transaction: transaction, file: file, line: line)
                },
                nothingRequested: { transaction.tellUnrequestedDropped(.nothingRequested) })
        }
    }
}

/// Whether the animations block ran. Main thread only.
private final class RanFlag {
    var value = false
}
