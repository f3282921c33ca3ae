/// An updater as stored: called on the main thread with the delivery's flag.
struct UpdaterEntry {
    /// Increasing in registration order, never reused within one context.
    let id: UInt64
    let call: (Bool) -> Void
}

/// The registered updaters, in registration order (so in increasing ``UpdaterEntry/id``). The first is
/// stored inline: most contexts have exactly one, and then no array is allocated.
///
/// A delivery walks it one entry at a time with ``next(after:upTo:)``, under the context's lock, and
/// calls each entry outside the lock: an updater removed while a delivery runs (by an earlier updater
/// of the same delivery, or from another thread) is never called again, and one added during a delivery
/// first runs in the next one.
struct UpdaterList {
    // Invariant: `rest` is empty whenever `first` is nil.
    private var first: UpdaterEntry?
    private var rest: [UpdaterEntry] = []
    private var lastID: UInt64 = 0

    var count: Int { first == nil ? 0 : 1 + rest.count }

    /// The id of the newest registration (0: none yet): a delivery calls entries up to it.
    var newestID: UInt64 { lastID }

    /// Registers `call`; returns its id.
    mutating func append(_ call: @escaping (Bool) -> Void) -> UInt64 {
        lastID += 1
        let entry = UpdaterEntry(id: lastID, call: call)
        if first == nil {
            first = entry
        } else {
            rest.append(entry)
        }
        return lastID
    }

    /// The first entry with an id above `id` and at most `limit`, if any.
    func next(after id: UInt64, upTo limit: UInt64) -> UpdaterEntry? {
        guard let head = first else { return nil }
        if head.id > id { return head.id <= limit ? head : nil }
        // Binary search in `rest` (ids increase) for the first id above `id`.
        var low = 0
        var high = rest.count
        while low < high {
            let middle = (low + high) / 2
            if rest[middle].id <= id { low = middle + 1 } else { high = middle }
        }
        guard low < rest.count, rest[low].id <= limit else { return nil }
        return rest[low]
    }

    /// Whether the updater with `id` is registered (O(log n)).
    func contains(id: UInt64) -> Bool {
        id > 0 && next(after: id - 1, upTo: id) != nil
    }

    /// Removes the updater with `id`; returns what was removed (to be released outside the lock).
    mutating func remove(id: UInt64) -> UpdaterEntry? {
        if let head = first, head.id == id {
            first = rest.isEmpty ? nil : rest.removeFirst()
            return head
        }
        guard let index = rest.firstIndex(where: { $0.id == id }) else { return nil }
        return rest.remove(at: index)
    }

    /// Removes everything; returns it (to be released outside the lock).
    mutating func removeAll() -> [UpdaterEntry] {
        guard let head = first else { return [] }
        defer {
            first = nil
            rest = []
        }
        return [head] + rest
    }
}
