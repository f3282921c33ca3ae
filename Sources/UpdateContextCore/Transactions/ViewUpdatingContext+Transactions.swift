extension ViewUpdatingContext {
    /// Asks for one update at the end of this cycle, carrying `transaction`: its animation (none: an
    /// explicit non-animated request), its values and its completions.
    ///
    /// The precedence rules apply with "has an animation" for `animated: true`: a non-animated transaction
    /// followed by an animated one flushes at once, not animated, and the flush's completions are those of
    /// the requests before it. The last animation among a delivery's animated requests is its animation.
    /// Any thread: from another thread the transaction waits in arrival order, with the other requests.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext()
    /// var transaction = UpdateTransaction(animation: .easeOut(duration: 0.2))
    /// transaction.addCompletion { completion in print(completion) }
    /// updateContext.setNeedsUpdate(transaction: transaction)
    /// ```
    ///
    /// - Parameters:
    ///   - transaction: The request's transaction.
    ///   - file: The caller's file (`#fileID`): what diagnostics name as the request's call site.
    ///   - line: The caller's line.
    @inlinable
    public func setNeedsUpdate(transaction: UpdateTransaction, file: StaticString = #fileID, line: UInt = #line) {
        // Inlined into the caller, where `file` and `line` are constants: the fast path is a call that carries
        // the transaction alone, so it keeps a small frame (passed through it, the four registers of `file`
        // and `line` were saved and restored around its checks on every request), and only the slow path
        // takes the caller's site.
        if _requestIfRepeated(transaction) { return }
        _request(transaction, file: file, line: line)
    }

    /// The fast path of ``setNeedsUpdate(transaction:file:line:)``: `true` when the request changes nothing
    /// (the same plain transaction again on a dirty context), after counting it.
    @usableFromInline
    func _requestIfRepeated(_ transaction: UpdateTransaction) -> Bool {
        storage.isRepeatedPlainTransaction(transaction)
    }

    /// The slow path of ``setNeedsUpdate(transaction:file:line:)``.
    @usableFromInline
    func _request(_ transaction: UpdateTransaction, file: StaticString, line: UInt) {
        storage.submit(transaction.joiningCurrentScope(), update: false, site: RequestSite(file: file, line: line))
    }

    /// Delivers at once with `transaction` (merged after what is pending) and cancels the update scheduled
    /// for the end of the cycle: ``update(animated:file:line:)`` with a transaction.
    ///
    /// Main thread. Inside an updater it is done in a later cycle; while suspended, it is kept until
    /// ``resume(file:line:)``. Called on another thread — a mistake — it stops a debug build at the
    /// caller's line; a release build warns through `UpdateDiagnostics` and makes it one forced update in
    /// the next main-thread cycle, with `transaction` (its completions run after that delivery).
    public func update(transaction: UpdateTransaction, file: StaticString = #fileID, line: UInt = #line) {
        storage.update(nil, transaction: transaction, file: file, line: line)
    }

    /// Registers an updater that receives the delivery's transaction: its animation (or `nil`), its custom
    /// values, and ``UpdateTransaction/animate(_:)`` to run the changes inside the platform's animation —
    /// the delivery's completions then wait for that animation to end.
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
    /// Called on the main thread, once per delivery, like ``onUpdate(_:)`` (same removal rules). A
    /// delivery whose requests carried no transaction passes one with the default animation when it is
    /// animated, none otherwise.
    @discardableResult
    public func onUpdateWithTransaction(_ updater: @escaping (_ transaction: UpdateTransaction) -> Void)
        -> ViewUpdater
    {
        let storage = self.storage
        return onUpdate { animated in updater(storage.deliveryTransaction(animated: animated)) }
    }

    /// The transaction of the delivery under way, for an updater registered with ``onUpdate(_:)`` (or a
    /// ``ViewUpdating`` object's `updateView(animated:)`): `nil` outside a delivery. Main thread.
    public var deliveryTransaction: UpdateTransaction? {
        storage.transactionUnderWay
    }

    /// Performs `changes` inside the animation of the delivery under way — the transaction's, so a
    /// request made with `withUpdateAnimation(.spring(…))` animates with that spring — or directly when the
    /// delivery is not animated, or outside a delivery. The delivery's completions wait for the animation.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// final class Badge: ViewUpdating {
    ///     let updateContext = ViewUpdatingContext()
    ///     @NeedsUpdate var count = 0
    ///     func updateView(animated: Bool) {
    ///         updateContext.animateChanges { /* set view properties from count */ }
    ///     }
    /// }
    /// ```
    ///
    /// Main thread (inside an updater, or `updateView(animated:)`).
    public func animateChanges(_ changes: @escaping () -> Void) {
        guard let transaction = deliveryTransaction else {
            changes()
            return
        }
        transaction.animate(changes)
    }
}
