import Dispatch

/// Something the watchdog looks at once per tick, from the watchdog's queue (any thread).
package protocol WatchdogSubject: AnyObject {
    /// What the subject's state is now, read without waiting for its own thread: `nil` when there is
    /// nothing to watch any more (the subject is dropped), `0` when all is well, any other value a
    /// suspicious state. The same suspicious value at two ticks in a row (a second apart) is reported.
    func watchdogState() -> UInt64?
    /// Reports what the suspicious state means (through `UpdateDiagnostics.emit`); the subject is dropped.
    func watchdogReport()
}

/// Finds what goes wrong by silence — work that waits for more than a second for a scheduler that does
/// not turn, or for a `resume()` that does not come — by looking, about once a second, at the subjects
/// registered with it. It runs only while it has subjects: an idle program has no timer.
package final class Watchdog: @unchecked Sendable {
    // @unchecked Sendable: `state` is behind its lock; the subjects are called outside it.
    private struct Entry {
        weak var subject: (any WatchdogSubject)?
        /// The suspicious state seen at the last tick (0: none).
        var suspect: UInt64 = 0
        /// Bumped by every ``Watchdog/watch(_:)``: a tick drops an entry only if nobody watched it again
        /// since the tick looked at it.
        var generation: UInt64 = 0
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var timer: (any DispatchSourceTimer)?
        /// Tests tick by hand: no timer is started while this is false.
        var isAutomatic = true
    }

    package static let shared = Watchdog()

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "NotificationCoalescing.Watchdog", qos: .utility)

    /// Whether a timer ticks by itself (about once a second while there are subjects). Tests turn it off
    /// and call ``tick()``. Any thread.
    package var isAutomatic: Bool {
        get { state.withLock { $0.isAutomatic } }
        set {
            let timer = state.withLock { state -> (any DispatchSourceTimer)? in
                state.isAutomatic = newValue
                defer { if !newValue { state.timer = nil } }
                return newValue ? nil : state.timer
            }
            timer?.cancel()
            if newValue { startTimerIfNeeded() }
        }
    }

    /// Watches `subject` from now on (once: watching it again changes nothing). Any thread.
    package func watch(_ subject: some WatchdogSubject) {
        state.withLock { state in
            let id = ObjectIdentifier(subject)
            if let entry = state.entries[id], entry.subject != nil {
                state.entries[id]?.generation &+= 1
            } else {
                state.entries[id] = Entry(subject: subject)
            }
        }
        startTimerIfNeeded()
    }

    /// Looks at every subject once: reports those suspicious at this tick and the previous one, drops those
    /// with nothing to watch. The timer calls it; tests call it. Any thread.
    package func tick() {
        let entries = state.withLock { $0.entries }
        var verdicts: [(id: ObjectIdentifier, generation: UInt64, state: UInt64?)] = []
        var toReport: [any WatchdogSubject] = []
        for (id, entry) in entries {
            guard let subject = entry.subject, let now = subject.watchdogState() else {
                verdicts.append((id, entry.generation, nil))
                continue
            }
            if now != 0 && now == entry.suspect {
                toReport.append(subject)
                verdicts.append((id, entry.generation, nil))
            } else {
                verdicts.append((id, entry.generation, now))
            }
        }
        let timer = state.withLock { state -> (any DispatchSourceTimer)? in
            for verdict in verdicts {
                if let now = verdict.state {
                    state.entries[verdict.id]?.suspect = now
                } else if state.entries[verdict.id]?.generation == verdict.generation {
                    state.entries[verdict.id] = nil
                }
            }
            guard state.entries.isEmpty, let timer = state.timer else { return nil }
            state.timer = nil
            return timer
        }
        timer?.cancel()
        for subject in toReport { subject.watchdogReport() }
    }

    /// Whether `subject` is watched (tests).
    package func isWatching(_ subject: some WatchdogSubject) -> Bool {
        state.withLock { $0.entries[ObjectIdentifier(subject)]?.subject != nil }
    }

    private func startTimerIfNeeded() {
        let timer = state.withLock { state -> (any DispatchSourceTimer)? in
            guard state.isAutomatic, state.timer == nil, !state.entries.isEmpty else { return nil }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            state.timer = timer
            return timer
        }
        guard let timer else { return }
        timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
    }
}
