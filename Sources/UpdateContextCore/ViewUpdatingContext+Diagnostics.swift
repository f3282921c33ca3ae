import CCoalescingSupport
import CoalescingRuntime
import Foundation

extension ViewUpdatingContext: CustomDebugStringConvertible {
    /// What a person asks when a view did not update, answered in a few lines: the label; whether an
    /// update is pending; whether the context is suspended, and how deep; whether its work waits for a
    /// pass in a common run-loop mode (parked while the main loop runs a private mode); its scheduler, and
    /// whether and when that scheduler last turned; how many updaters it has; how many deliveries it made.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext(label: "profile header")
    /// print(updateContext.debugDescription)  // or `po updateContext` in the debugger
    /// ```
    ///
    /// Complete on the main thread. From another thread it says only what other threads can read
    /// without waiting (pending, suspended, the scheduler, the updaters).
    public var debugDescription: String { storage.diagnosticDescription }
}

extension ViewUpdatingContext.ViewUpdater: CustomDebugStringConvertible {
    /// The token and the context it belongs to (see ``ViewUpdatingContext/debugDescription``), or that the
    /// updater was removed, or its context released. Any thread.
    public var debugDescription: String { "\(description): \(contextDescription)" }
}
