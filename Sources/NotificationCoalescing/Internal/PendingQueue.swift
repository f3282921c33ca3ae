import Foundation

/// The held notifications of one context: FIFO, with coalescing lookups in O(1) per enqueue.
///
/// Entries live in an append-only array of slots; coalescing empties a slot. Index lists map a key to
/// the slots enqueued under it and may point at slots emptied through another index; such stale
/// positions are skipped and dropped when their list is next used, so every position is visited a
/// bounded number of times and an enqueue costs O(1) amortized, however many notifications are held.
///
/// Memory follows what is held, not how many enqueues there were: when emptied slots outnumber the
/// held ones, the slots and the indexes are rebuilt from what is held (O(held), after at least as many
/// enqueues, so still O(1) amortized).
///
/// The (name, sender) index serves the default mask and always exists. The name-only and sender-only
/// indexes are built the first time a mask needs them, so the default path maintains one dictionary.
///
/// Typed messages share the slots (one FIFO across notifications and messages) but are kept by an index of
/// their own, by (type, subject): a message replaces only the message of its own key, in place (it keeps
/// the place of the first enqueue of its key since the last turn; an enqueue of a key already held
/// touches no slot), and no notification's mask ever matches a message.
package struct PendingQueue {
    private struct NameAndSender: Hashable {
        let name: Notification.Name
        let sender: SenderKey
    }

    private(set) var slots: [PendingNotification?] = []
    private var byNameAndSender: [NameAndSender: [Int]] = [:]
    private var byName: [Notification.Name: [Int]]?
    private var bySender: [SenderKey: [Int]]?
    /// The held typed messages (one per key, in no particular order) and their index by key.
    private var messages: [HeldMessage] = []
    private var byMessage: [MessageKey: Int] = [:]
    /// The key of the last message held or replaced, and its place in `messages`: a burst of one key skips
    /// the hash.
    private var lastMessage: (key: MessageKey, index: Int)?

    private struct HeldMessage {
        var post: any MessagePosting
        /// Kept with the first message of the key; a replacement brings the same one.
        let subject: AnyObject?
        let key: MessageKey
    }

    /// How many notifications are held.
    package private(set) var count = 0

    package init() {}

    package var isEmpty: Bool { count == 0 }

    /// Removes every held notification that matches `name` and `sender` under `mask`.
    ///
    /// - Returns: How many were removed.
    @discardableResult
    package mutating func removeMatching(
        name: Notification.Name,
        sender: SenderKey,
        mask: NotificationQueue.NotificationCoalescing
    ) -> Int {
        var removed: [PendingNotification] = []
        return removeMatching(name: name, sender: sender, mask: mask, into: &removed)
    }

    /// Removes every held notification that matches `name` and `sender` under `mask`, moving them into
    /// `removed`, so that the caller can release them (and the user objects they carry) after leaving its
    /// lock.
    ///
    /// - Returns: How many were removed.
    @discardableResult
    package mutating func removeMatching(
        name: Notification.Name,
        sender: SenderKey,
        mask: NotificationQueue.NotificationCoalescing,
        into removed: inout [PendingNotification]
    ) -> Int {
        guard count > 0 else { return 0 }
        let onName = mask.contains(.onName)
        let onSender = mask.contains(.onSender)
        let positions: [Int]?
        switch (onName, onSender) {
        case (true, true):
            positions = byNameAndSender.removeValue(forKey: NameAndSender(name: name, sender: sender))
        case (true, false):
            if byName == nil { byName = buildIndex { $0.notification.name } }
            positions = byName!.removeValue(forKey: name)
        case (false, true):
            if bySender == nil { bySender = buildIndex { $0.sender } }
            positions = bySender!.removeValue(forKey: sender)
        case (false, false):
            return 0
        }
        guard let positions else { return 0 }
        var count = 0
        for position in positions {
            guard let pending = slots[position], pending.messageKey == nil else { continue }
            removed.append(pending)
            slots[position] = nil
            count += 1
        }
        self.count -= count
        return count
    }

    /// The modes the held notifications wait for (each once).
    package var modes: [RunLoop.Mode] {
        var modes: [RunLoop.Mode] = []
        for case let pending? in slots {
            for mode in pending.modes where !modes.contains(mode) { modes.append(mode) }
        }
        return modes
    }

    /// The names of the held notifications, in posting order (diagnostics); a typed message shows as its
    /// type's name.
    package var names: [Notification.Name] {
        slots.compactMap { slot in
            slot.map { pending in
                pending.messageKey.flatMap { byMessage[$0] }.map { Notification.Name(messages[$0].post.typeName) }
                    ?? pending.notification.name
            }
        }
    }

    /// Holds the typed message `post` under `key`: in place of the one held for the key, which it then
    /// hands back in `post` (so that the caller releases it, and the user's values it holds, outside its
    /// lock; nothing is copied), or after everything held so far. `slot` makes the slot of a new key.
    package mutating func holdMessage(
        _ post: inout any MessagePosting, key: MessageKey, subject: AnyObject?, slot: () -> PendingNotification
    ) {
        if let last = lastMessage, last.key == key {
            swap(&post, &messages[last.index].post)
            return
        }
        if let index = byMessage[key] {
            lastMessage = (key, index)
            swap(&post, &messages[index].post)
            return
        }
        byMessage[key] = messages.count
        lastMessage = (key, messages.count)
        messages.append(HeldMessage(post: post, subject: subject, key: key))
        slots.append(slot())
        count += 1
    }

    /// Takes the message held for `key` out (for a turn that posts it).
    private mutating func takeMessage(_ key: MessageKey) -> (post: any MessagePosting, subject: AnyObject?)? {
        guard let index = byMessage.removeValue(forKey: key) else { return nil }
        lastMessage = nil
        let taken = messages[index]
        // The last entry takes the emptied place, so that `messages` stays dense.
        let last = messages.removeLast()
        if index < messages.count {
            messages[index] = last
            byMessage[last.key] = index
        }
        return (taken.post, taken.subject)
    }

    /// Holds `pending` after everything held so far.
    package mutating func append(_ pending: PendingNotification) {
        let position = slots.count
        slots.append(pending)
        count += 1
        // A held message's slot moving (compaction, a turn that keeps it): its entry stays by key, and no
        // notification index lists it.
        guard pending.messageKey == nil else { return }
        byNameAndSender[NameAndSender(name: pending.notification.name, sender: pending.sender), default: []]
            .append(position)
        if byName != nil { byName![pending.notification.name, default: []].append(position) }
        if bySender != nil { bySender![pending.sender, default: []].append(position) }
        if slots.count >= Self.compactionThreshold && slots.count > 2 * count { compact() }
    }

    /// Below this many slots, emptied ones are left until the next turn takes everything.
    static let compactionThreshold = 64

    /// Rebuilds the slots and the indexes from the held notifications, in order.
    private mutating func compact() {
        let held = slots.compactMap { $0 }
        let hadName = byName != nil
        let hadSender = bySender != nil
        slots = []
        slots.reserveCapacity(held.count * 2)
        byNameAndSender = [:]
        byName = hadName ? [:] : nil
        bySender = hadSender ? [:] : nil
        count = 0
        for pending in held { append(pending) }
    }

    /// Takes out every held notification that `admits` accepts: first the `.asap` ones, then the
    /// `.whenIdle` ones, each in the order they were enqueued. The rest stay held, in order.
    package mutating func take(where admits: (PendingNotification) -> Bool) -> [PendingNotification] {
        guard count > 0 else { return [] }
        var asap: [PendingNotification] = []
        var idle: [PendingNotification] = []
        var kept: [PendingNotification] = []
        asap.reserveCapacity(count)
        for case var pending? in slots {
            if !admits(pending) {
                kept.append(pending)
                continue
            }
            if let key = pending.messageKey { pending.message = takeMessage(key) }
            if pending.style == .asap {
                asap.append(pending)
            } else {
                idle.append(pending)
            }
        }
        removeSlots()
        for pending in kept { append(pending) }
        asap.append(contentsOf: idle)
        return asap
    }

    /// Drops everything.
    package mutating func removeAll() {
        removeSlots()
        let keepCapacity = messages.count <= 1_024
        messages.removeAll(keepingCapacity: keepCapacity)
        byMessage.removeAll(keepingCapacity: keepCapacity)
        lastMessage = nil
    }

    /// Drops the slots and the notifications' indexes, but not the held messages' entries (a turn re-appends
    /// the slots it keeps).
    private mutating func removeSlots() {
        let keepCapacity = slots.count <= 1_024
        slots.removeAll(keepingCapacity: keepCapacity)
        byNameAndSender.removeAll(keepingCapacity: keepCapacity)
        byName = nil
        bySender = nil
        count = 0
    }

    private func buildIndex<Key: Hashable>(_ key: (PendingNotification) -> Key) -> [Key: [Int]] {
        var index: [Key: [Int]] = [:]
        for (position, pending) in slots.enumerated() {
            if let pending, pending.messageKey == nil { index[key(pending), default: []].append(position) }
        }
        return index
    }
}
