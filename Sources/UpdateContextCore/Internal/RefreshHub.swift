import CoalescingRuntime
import Foundation

/// One observation of a lifecycle notification on one center, shared by every context that refreshes
/// on it.
///
/// A registration per context would cost a `NotificationCenter` entry, a token, a handler box and two
/// locks — over 700 bytes each. Here a context costs one dictionary entry in a hub, and the hub observes
/// the center once. Contexts join on creation and leave in `deinit`; the last one to leave removes the
/// observation and the hub. A context does not keep the names and the center it joined with: leaving
/// looks through the hubs (a program has a handful: names × centers), so that an idle context stays small.
package final class RefreshHub: @unchecked Sendable {
    // @unchecked Sendable: `members` and `observation` are read and written only while holding the
    // global `hubs` lock; `center` and `name` are immutable.
    private struct Key: Hashable {
        let center: ObjectIdentifier
        let name: Notification.Name
    }

    private static let hubs = Locked<[Key: RefreshHub]>([:])

    private let center: NotificationCenter
    private var members: [ObjectIdentifier: UpdateStorage] = [:]
    private var observation: (any NSObjectProtocol)?

    private init(center: NotificationCenter) {
        self.center = center
    }

    /// Makes `core` refresh whenever one of `names` is posted on `center`.
    static func join(_ core: UpdateStorage, names: [Notification.Name], center: NotificationCenter) {
        core.refreshes = true
        hubs.withLock { hubs in
            for name in names {
                let key = Key(center: ObjectIdentifier(center), name: name)
                let hub: RefreshHub
                if let existing = hubs[key] {
                    hub = existing
                } else {
                    hub = RefreshHub(center: center)
                    // The center calls observers outside its own lock, so observing while holding ours
                    // cannot deadlock with a post that is waiting for ours in `fire()`.
                    hub.observation = center.addObserver(forName: name, object: nil, queue: nil) { [weak hub] _ in
                        hub?.fire()
                    }
                    hubs[key] = hub
                }
                hub.members[ObjectIdentifier(core)] = core
            }
        }
    }

    /// Undoes ``join(_:names:center:)``: `core` leaves every hub it joined.
    static func leave(_ core: UpdateStorage) {
        let id = ObjectIdentifier(core)
        hubs.withLock { hubs in
            for (key, hub) in hubs where hub.members.removeValue(forKey: id) != nil && hub.members.isEmpty {
                if let observation = hub.observation { hub.center.removeObserver(observation) }
                hub.observation = nil
                hubs[key] = nil
            }
        }
    }

    /// Whether `core` refreshes on `name` posted on `center`: a lifecycle message of that name refreshes it
    /// already (Foundation delivers a message to the observers of its notification name).
    package static func covers(_ core: UpdateStorage, name: Notification.Name, center: NotificationCenter) -> Bool {
        let id = ObjectIdentifier(core)
        return hubs.withLock { hubs in
            hubs[Key(center: ObjectIdentifier(center), name: name)]?.members[id] != nil
        }
    }

    /// Whether `core` refreshes on `name` (on any center): for `debugDescription`.
    static func isMember(_ core: UpdateStorage, of name: Notification.Name) -> Bool {
        let id = ObjectIdentifier(core)
        return hubs.withLock { hubs in
            hubs.contains { key, hub in key.name == name && hub.members[id] != nil }
        }
    }

    private func fire() {
        let cores = Self.hubs.withLock { _ in Array(members.values) }
        for core in cores { core.refresh() }
    }
}
