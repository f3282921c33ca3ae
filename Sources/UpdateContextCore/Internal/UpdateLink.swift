import CoalescingRuntime

/// What outside callbacks hold instead of a core: Observation's `onChange` closures, the layers'
/// subscriptions (async sequences, messages, Combine), and the context's faces.
///
/// Those callbacks can outlive the context (an `onChange` waits for a change that may never come). A
/// link is cut when the context goes: it then requests nothing and keeps nothing alive, and it lets go of
/// its faces (a layer's face cancels what it runs when it goes). A weak reference would do the first half,
/// but would give the core a side table and slow every retain of it.
package final class UpdateLink: Sendable {
    private struct State {
        var core: UpdateStorage?
        /// The faces (one per type), kept while the context lives.
        var faces: [ObjectIdentifier: any AnyObject & Sendable] = [:]
        /// While recording: the first request the context's next delivery absorbs (its site and thread).
        var recordedSite: UpdateDiagnostics.Report.CallSite?
    }

    private let state: Locked<State>

    init(_ core: UpdateStorage) {
        state = Locked(State(core: core))
    }

    /// `setNeedsUpdate(animated:)` on the context, if it is still there, from a Combine publisher's value.
    /// Any thread.
    package func setNeedsUpdate(_ flag: Bool?) {
        setNeedsUpdate(flag, site: RequestSite(.publisher))
    }

    /// `setNeedsUpdate(animated:)` on the context, if it is still there; `site` is what diagnostics name.
    /// Any thread.
    package func setNeedsUpdate(_ flag: Bool?, site: RequestSite) {
        state.withLock { $0.core }?.setNeedsUpdateFromOutside(flag, site: site)
    }

    /// The context's lifecycle refresh (an ``ViewUpdatingContext/update(animated:file:line:)`` at once on the
    /// main thread, in the next cycle elsewhere), if it is still there. Any thread.
    package func refresh() {
        state.withLock { $0.core }?.refresh()
    }

    /// `setNeedsUpdate(transaction:)` on the context for a caller in another product, named by its line.
    package func setNeedsUpdate(transaction: UpdateTransaction, file: StaticString = #fileID, line: UInt = #line) {
        setNeedsUpdate(transaction: transaction, site: RequestSite(file: file, line: line))
    }

    /// `setNeedsUpdate(transaction:)` on the context, if it is still there (otherwise the transaction's
    /// completions are told it was dropped). Inside a scope the request joins it. Any thread.
    package func setNeedsUpdate(transaction: UpdateTransaction, site: RequestSite) {
        let transaction = transaction.joiningCurrentScope()
        if let core = state.withLock({ $0.core }), let scheduler = core.retainedScheduler() {
            withExtendedLifetime(scheduler) { core.request(transaction, site: site) }
        } else {
            transaction.tellUnrequestedDropped(.contextReleased)
        }
    }

    package var isCut: Bool { state.withLock { $0.core == nil } }

    /// Whether updater `id` is still registered on the context (`false` once the context is gone). Any thread.
    func hasUpdater(_ id: UInt64) -> Bool {
        state.withLock { $0.core }?.hasUpdater(id) ?? false
    }

    /// Whether the context, if it is still there, has an update pending. Any thread.
    var isUpdatePending: Bool {
        state.withLock { $0.core }?.isUpdatePending ?? false
    }

    /// While recording: notes `site` as the first request of the context's next delivery, unless one is noted
    /// already or the link is cut (the context is gone). Returns whether it noted it. Any thread.
    func noteFirstRequest(_ site: RequestSite) -> Bool {
        if state.withLock({ $0.recordedSite != nil || $0.core == nil }) { return false }
        let callSite = site.callSite  // made outside the lock (it reads the thread's name)
        return state.withLock { state in
            guard state.recordedSite == nil, state.core != nil else { return false }
            state.recordedSite = callSite
            return true
        }
    }

    /// The first request noted for the delivery beginning now, taken (a delivery made while not recording just
    /// forgets it). Main thread.
    func takeRecordedSite() -> UpdateDiagnostics.Report.CallSite? {
        state.withLock { state in
            defer { state.recordedSite = nil }
            return state.recordedSite
        }
    }

    /// The face of type `Face`, if one was adopted.
    package func face<Face: AnyObject & Sendable>(_ type: Face.Type) -> Face? {
        state.withLock { $0.faces[ObjectIdentifier(type)] } as? Face
    }

    /// Keeps `face` unless a face of its type is already kept (then returns that one, and `face` is
    /// released by the caller, outside the lock). A cut link keeps nothing.
    package func adopt<Face: AnyObject & Sendable>(_ face: Face) -> Face {
        let kept = state.withLock { state -> (any AnyObject & Sendable)? in
            if state.core == nil { return nil }
            if let kept = state.faces[ObjectIdentifier(Face.self)] { return kept }
            state.faces[ObjectIdentifier(Face.self)] = face
            return face
        }
        return kept as? Face ?? face
    }

    /// The context is gone: request nothing more, let the faces go.
    func cut() {
        let faces = state.withLock { state -> [any AnyObject & Sendable] in
            state.core = nil
            state.recordedSite = nil
            defer { state.faces.removeAll() }
            return Array(state.faces.values)
        }
        _ = faces  // released here, outside the lock: a face's deinit may remove an updater or cancel a task
    }
}
