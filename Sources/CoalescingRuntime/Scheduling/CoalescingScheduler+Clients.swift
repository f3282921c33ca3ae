import CCoalescingSupport
import Foundation

// The package's contexts as a scheduler's clients: registering one for the next turn, and the turn that
// serves them (the owner thread's list, the others' queue, work parked for a run-loop mode).

extension CoalescingScheduler {
    // MARK: Clients (the package's contexts)

    /// Registers `client` for the next turn and asks for one; with `nil`, only asks for a turn.
    ///
    /// Clients dedupe themselves: a client is passed here at most once until its next `performTurn`.
    package final func schedule(_ client: (any TurnClient)?) {
        if let client {
            queue.withLock { $0.waiting.append(client) }
        }
        askForTurn()
    }

    /// The same as ``schedule(_:)`` without a lock, for a caller that knows it is on the scheduler's
    /// thread (it has checked ``isCurrent``): the path a coalesced request takes on the main thread.
    /// Inlinable, so that the contexts' storage (another module) lists itself without a call.
    @inlinable @inline(__always)
    package final func scheduleOnOwnerThread(_ client: some TurnClient) {
        ownerWaiting.append(client)
        joinCurrentThread()
        // The plain load keeps a burst of requests to one shared write (and the call below off the path).
        if cvu_word_load_relaxed(turnWord) & 1 != 0 { return }
        askForTurn()
    }

    /// Joins the calling thread's list of schedulers (``ThreadSchedulers``): call it on the scheduler's own
    /// thread only (where it lists work, turns, or gets a view context). A load and a compare when this thread
    /// was the last it joined.
    @inlinable @inline(__always)
    package final func joinCurrentThread() {
        if cvu_word_load_relaxed(turnWord + Word.joinedThread) != cvu_thread_identity() { joinCurrentThreadSlowly() }
    }

    @usableFromInline
    package final func joinCurrentThreadSlowly() {
        cvu_word_store_relaxed(turnWord + Word.joinedThread, cvu_thread_identity())
        ThreadSchedulers.current.add(self)
    }

    /// Whether the scheduler's thread runs a mode that is not a common one now (a nested loop in a mode of
    /// the app's own, or a turn in one): view updates wait for a common pass. On the scheduler's thread.
    package final var isInPrivateMode: Bool {
        currentMode.map { !isCommon($0) } ?? false
    }

    /// Whether clients may be waiting for a turn (the next one, or parked for a mode). On the scheduler's
    /// thread only.
    package final var mayHaveWaitingClients: Bool {
        !ownerWaiting.isEmpty || cvu_word_load_relaxed(turnWord) & 1 != 0 || queue.withLock { !$0.parked.isEmpty }
    }

    /// The clients waiting for a turn — for the next one, and those parked for another mode — each retained in
    /// the result (not those a turn under way is calling): for work that must act on everything pending before
    /// the turn (an animated scope's flush). On the scheduler's thread only.
    package final func waitingClients() -> [any TurnClient] {
        var clients = ownerWaiting
        queue.withLock { queue in
            clients += queue.waiting
            clients += queue.parked.map(\.client)
        }
        return clients
    }

    /// Marks a turn as asked for; the first mark since the last turn began calls ``requestTurn(insideTurn:)``.
    @usableFromInline
    final func askForTurn() {
        // The plain load keeps a burst of requests to one shared write; the exchange decides, among threads
        // racing, which one asks (and opens the next batch).
        var word = cvu_word_load_relaxed(turnWord)
        while true {
            if word & 1 != 0 { return }
            if cvu_word_compare_exchange(turnWord, word, (word &+ 2) | 1) { break }
            word = cvu_word_load_relaxed(turnWord)
        }
        cvu_word_store_relaxed(turnWord + Word.asked, now())
        requestTurn(insideTurn: isCurrent && turnDepth > 0)
    }

    /// Runs one turn in `mode` on the scheduler's thread: every waiting client is called once.
    ///
    /// A client that answers that work remains (for modes this turn did not admit) is parked: it is
    /// called again at every later turn, but does not by itself ask for one.
    /// - Returns: How many clients were called.
    @discardableResult
    package final func runTurn(mode: RunLoop.Mode?, isCommonMode: Bool) -> Int {
        // The mark first, then the lists: a client added after the lists were taken finds the mark cleared
        // and asks for the next turn (a new batch). The batch whose mark this clears is served here.
        let word = cvu_word_fetch_and(turnWord, ~1)
        if word & 1 != 0 { servedBatch = word >> 1 }
        joinCurrentThread()
        // Take the owner thread's list by swapping, and give its buffer back afterwards: a large fan-out
        // then reuses one allocation turn after turn instead of growing a new array every cycle. The order:
        // the owner thread's list, what was parked, what other threads listed.
        var clients: [any TurnClient] = []
        swap(&clients, &ownerWaiting)
        queue.withLock { queue in
            clients += queue.parked.map(\.client)
            clients += queue.waiting
            queue.waiting.removeAll(keepingCapacity: queue.waiting.count <= 1_024)
            queue.parked.removeAll()
        }
        let count = clients.count
        guard count > 0 else {
            // An idle turn lets a large buffer go: a one-off spike (100 000 contexts dirtied once) must
            // not pin its buffer for the thread's life. Busy turns keep it, and reuse it.
            if clients.capacity <= 1_024 { swap(&clients, &ownerWaiting) }
            return 0
        }
        turnDepth += 1
        turnSerial &+= 1
        let began = noteTurn()
        let turn = SchedulerTurn(mode: mode, isCommonMode: isCommonMode, serial: turnSerial)
        var stillParked: [Parked] = []
        let interval = Signposts.begin(.turn, label: label, count: count)
        // Requests are counted (for signposts) while this scheduler's turns are signposted; recording counts them
        // as well.
        cvu_word_store_relaxed(turnWord + Word.counting, interval != nil ? 1 : 0)
        for client in clients {
            if let modes = client.performTurn(turn) { stillParked.append(Parked(client: client, modes: modes)) }
        }
        Signposts.end(interval)
        turnDepth -= 1
        noteTurnEnded(began)
        if !stillParked.isEmpty {
            queue.withLock { $0.parked.insert(contentsOf: stillParked, at: 0) }
        }
        if ownerWaiting.isEmpty {
            clients.removeAll(keepingCapacity: true)
            swap(&clients, &ownerWaiting)
        }
        return count
    }
}
