import CoalescingRuntime

extension ViewUpdatingContext {
    /// The token of one updater (``ViewUpdatingContext/onUpdate(_:)``, ``ViewUpdatingContext/onTrackedUpdate(file:line:_:)``,
    /// `StateUpdatingContext.onRender(file:line:_:)` in `UpdateContext`): ``remove()`` removes that updater.
    ///
    /// It is a handle, not a lifetime: the context owns its updaters, and an updater stays registered until
    /// it is removed or the context goes, whether or not the token is kept (so the result of `onUpdate` may
    /// be dropped). Keep it to remove one updater; ``ViewUpdatingContext/removeUpdaters()`` removes them all.
    ///
    /// Removal is final. On the main thread — inside an updater too — once ``remove()`` has returned the
    /// updater is never called again, not even later in the delivery under way, and what it captured is
    /// released at once. From another thread, removal never waits: once it has returned no call of the
    /// updater begins, and the one call the main thread had already begun (claimed the updater, atomically
    /// with the removal, just before calling it) finishes normally.
    ///
    /// `Sendable`, `Hashable` by identity; every member may be used from any thread.
    public final class ViewUpdater: Sendable, Hashable, CustomStringConvertible {
        // nonisolated(unsafe): read and written only under this object's striped lock (`StripedLocks`),
        // which saves every token a lock of its own. `nil` once removed.
        private nonisolated(unsafe) var storage: UpdateStorage?
        let id: UInt64

        /// The token of updater `id` of `storage`. It holds the storage strongly, not weakly: a weak
        /// reference would give the storage a side table, which sends every retain and release of it down
        /// the runtime's slow path. The storage is small, and without its context it delivers nothing and
        /// holds no updater.
        init(storage: UpdateStorage, id: UInt64) {
            self.storage = storage
            self.id = id
        }

        /// Whether the updater is still registered: `false` once it was removed — by ``remove()``, by
        /// ``ViewUpdatingContext/removeUpdaters()`` — or its context is gone. Any thread (from another
        /// thread, a snapshot).
        public var isActive: Bool {
            guard let storage = StripedLocks.withLock(for: self, { storage }) else { return false }
            return storage.hasUpdater(id)
        }

        /// Removes the updater. Idempotent, any thread; never waits (see the type's discussion).
        public func remove() {
            let storage = StripedLocks.withLock(for: self) { () -> UpdateStorage? in
                defer { self.storage = nil }
                return self.storage
            }
            // Outside the lock: removal releases the updater's captures, whose deinit may run any code.
            storage?.removeRegistration(id)
        }

        /// The context's description, or what happened to it.
        var contextDescription: String {
            guard let storage = StripedLocks.withLock(for: self, { storage }) else { return "removed" }
            if storage.isCancelled { return "its context \"\(storage.label.string)\" was released" }
            guard storage.hasUpdater(id) else { return "removed" }
            // Says "released" itself when the context goes meanwhile (it holds the scheduler while it reads).
            return storage.diagnosticDescription
        }

        public var description: String {
            "ViewUpdater(\(id)\(isActive ? "" : ", removed"))"
        }

        public static func == (lhs: ViewUpdater, rhs: ViewUpdater) -> Bool {
            lhs === rhs
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}
