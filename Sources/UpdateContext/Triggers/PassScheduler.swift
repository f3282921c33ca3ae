import Dispatch
import Foundation
import UpdateContextCore

/// Ends a cycle when a pass that someone else runs takes place — UIKit 26's `updateProperties()` — and
/// falls back to the main queue when that pass does not come.
///
/// Work asks for the pass through `requestPass` (for UIKit: `view.setNeedsUpdateProperties()`); the
/// pass calls ``runPass()`` (or a context's `updateIfNeeded()`, which runs it), and everything waiting is
/// delivered there, inside the pass. If no pass has run by the time the main queue has turned twice after
/// the request (a view out of any window gets no pass), the scheduler runs the turn itself, so nothing
/// waits for a pass that never comes. Each batch — the work one request for the pass covers — has its own
/// fallback, which never delivers a later batch: that one waits for its own pass.
///
/// ```swift
/// // not compiled: package API (PassSchedulerTests runs this)
/// let scheduler = PassScheduler { print("pass requested") }
/// let queue = NotificationCoalescingContext(scheduler: scheduler)
/// queue.enqueue(Notification(name: .init("changed")))   // asks for the pass once
/// scheduler.runPass()                                   // inside the pass: posted here
/// ```
///
/// > Important: Its turns run on the main thread, whichever thread created it (it stands in for the main
/// > thread's cycles, like `.mainRunLoop`). `requestPass` is called on the main thread — at once when work is
/// > scheduled there, through the main queue when it is scheduled elsewhere — once per batch. A pass
/// > has no run-loop mode: a turn admits work of every mode.
package final class PassScheduler: CoalescingScheduler, PassDrivenScheduler, @unchecked Sendable {
    // @unchecked Sendable: the closures are immutable and only called on the main thread; the turn state is
    // the base class's.
    private let requestPass: () -> Void
    private let fellBack: () -> Void
    private let ownerStarted: @MainActor (AnyObject) -> Void

    /// - Parameters:
    ///   - requestPass: Asks for the pass; called on the main thread, once per batch of work.
    ///   - fellBack: Called on the main thread after the fallback delivered work that no pass came for (not
    ///     when it found nothing waiting), outside every lock of the package.
    ///   - ownerStarted: Called with the view or view controller whose `startUpdatingView()` connected a
    ///     context on this scheduler (binds the pass to it).
    package init(
        label: DiagnosticLabel = DiagnosticLabel(file: #fileID, line: #line), requestPass: @escaping () -> Void,
        fellBack: @escaping () -> Void = {}, ownerStarted: @escaping @MainActor (AnyObject) -> Void = { _ in }
    ) {
        self.requestPass = requestPass
        self.fellBack = fellBack
        self.ownerStarted = ownerStarted
        super.init(label: label, turnThread: .main)
    }

    package func runRequestedPass() {
        if hasRequestedTurn { runPass() }
    }

    @MainActor
    package func ownerStartedUpdating(_ owner: AnyObject) {
        ownerStarted(owner)
    }

    package override func requestTurn(insideTurn: Bool) {
        let batch = newestBatch
        if isCurrent {
            requestPass()
        } else {
            DispatchQueue.main.async { [weak self] in self?.requestPass() }
        }
        // The fallback: two hops of the main queue, so that at least one end of a run-loop pass (where
        // UIKit runs its update passes) comes between the request and the fallback turn. It serves its own
        // batch only: once a pass has begun to serve it, the work waiting now is a later batch's, which
        // has asked for its own pass (and queued its own fallback).
        DispatchQueue.main.async { [weak self] in
            DispatchQueue.main.async { [weak self] in
                guard let self, hasRequestedTurn, !hasServed(batch: batch) else { return }
                if runTurn(mode: nil, isCommonMode: true) > 0 { fellBack() }
            }
        }
    }

    /// Runs the turn now: call it inside the pass, on the main thread. Delivers everything waiting.
    ///
    /// - Returns: How many clients had work waiting.
    @discardableResult
    package func runPass() -> Int {
        if !isCurrent { fatalError("PassScheduler.runPass() must be called on the main thread (inside the pass)") }
        return runTurn(mode: nil, isCommonMode: true)
    }
}
