/// The animated-flag precedence rules, and nothing else: a pure value that a context drives.
///
/// State: the pending explicit flag `f`, whether an update is scheduled, and how many times the
/// context is suspended. Each method applies one event and returns what to deliver *now*; the caller
/// delivers it to every updater. The table in CONTRACT.md is the spec:
///
/// | event | effect |
/// | --- | --- |
/// | `request(nil)` | schedule; `f` unchanged |
/// | `request(false)` | `f = false`; schedule |
/// | `request(true)` while `f == false` | deliver `false` now; then `f = true`; schedule |
/// | `request(true)` otherwise | `f = true`; schedule |
/// | `update(a)` | if `a` is given, `f = a`; deliver now; the scheduled update is cancelled |
/// | any delivery | delivers `f ?? default`; then `f = nil` |
/// | `endOfCycle()` | if scheduled, deliver once |
///
/// While suspended nothing is delivered: requests (and `update`) are kept, and `resume` delivers them
/// once (as a forced delivery when an `update` was kept: ``isForced``). A `true` that would flush
/// early leaves `f == false` instead, so that changes requested as non-animated never animate.
struct UpdateRules: Equatable, Sendable {
    /// The pending explicit flag, `f`.
    private(set) var pendingFlag: Bool?
    /// Whether a delivery is due at the end of the cycle (or on resume, while suspended).
    private(set) var isScheduled = false
    /// Whether the scheduled delivery stands for an `update()` kept while suspended: a forced delivery,
    /// which renders even what has not changed.
    private(set) var isForced = false
    /// Nesting depth of `suspend()`; 32 bits keep the whole value in 8 bytes.
    private(set) var suspensions: Int32 = 0

    var isSuspended: Bool { suspensions > 0 }

    /// What one request asks of the caller.
    struct Outcome: Equatable {
        /// A value to deliver at once (the early non-animated flush), before anything else.
        var deliverNow: Bool?
        /// Whether the caller must arrange a turn (the first request of a cycle).
        var needsTurn = false
    }

    /// Whether `request(flag)` would change nothing: the fast path a caller may take without it.
    @inline(__always)
    func isNoOp(_ flag: Bool?) -> Bool {
        isScheduled && (flag == nil || flag == pendingFlag)
    }

    /// `setNeedsUpdate(animated: flag)`.
    mutating func request(_ flag: Bool?) -> Outcome {
        var outcome = Outcome()
        if flag == true, pendingFlag == false {
            if isSuspended {
                // Kept for resume: the non-animated changes already requested must not animate.
                outcome.needsTurn = schedule()
                return outcome
            }
            outcome.deliverNow = false
            pendingFlag = nil
        }
        if let flag { pendingFlag = flag }
        outcome.needsTurn = schedule()
        return outcome
    }

    /// An animated change is about to land while `f == false`: the early non-animated flush that
    /// `request(true)` would make, made now — before the change — so that it shows the state before it.
    /// `f` is cleared and the update stays scheduled; the request that follows the change sets the flag.
    /// Returns whether to deliver `false` now (never while suspended: then `f == false` is kept, as
    /// `request(true)` keeps it).
    mutating func flushBeforeAnimatedChange() -> Bool {
        guard pendingFlag == false, !isSuspended else { return false }
        pendingFlag = nil
        return true
    }

    /// `update(animated: flag)`: the value to deliver now, or `nil` while suspended (then it is kept).
    mutating func update(_ flag: Bool?, defaultAnimated: Bool) -> Bool? {
        if let flag { pendingFlag = flag }
        if isSuspended {
            isScheduled = true
            isForced = true
            return nil
        }
        return deliver(defaultAnimated)
    }

    /// The end of a cycle (also `updateIfNeeded()`): the value to deliver, if an update is scheduled.
    mutating func endOfCycle(defaultAnimated: Bool) -> Bool? {
        guard isScheduled, !isSuspended else { return nil }
        return deliver(defaultAnimated)
    }

    /// A delivery of `animated` that could not be made (suspended): kept as a scheduled update with that
    /// flag (forced if it was), for ``resume(defaultAnimated:)``. Returns whether the caller must arrange
    /// a turn (never while suspended).
    mutating func keep(animated: Bool, forced: Bool) -> Bool {
        pendingFlag = animated
        if forced { isForced = true }
        return schedule()
    }

    /// Takes the pending requests out (flag, scheduled, forced), leaving the suspensions: what is requested
    /// from now on can be told apart from them. Give them back with ``restore(_:)``.
    mutating func setPendingAside() -> UpdateRules {
        let saved = self
        pendingFlag = nil
        isScheduled = false
        isForced = false
        return saved
    }

    /// Puts back what ``setPendingAside()`` took (with the suspensions as they are now), and returns what
    /// was requested meanwhile, as the rules left it: `nil` when nothing was.
    mutating func restore(_ saved: UpdateRules) -> UpdateRules? {
        let meanwhile = self
        self = saved
        suspensions = meanwhile.suspensions
        return meanwhile.isScheduled ? meanwhile : nil
    }

    mutating func suspend() {
        precondition(suspensions < .max, "ViewUpdatingContext.suspend() nested too deeply")
        suspensions += 1
    }

    /// Ends one suspension; when the last one ends, returns what was kept, to deliver now.
    mutating func resume(defaultAnimated: Bool) -> Bool? {
        precondition(suspensions > 0, "ViewUpdatingContext.resume() called more times than suspend()")
        suspensions -= 1
        return endOfCycle(defaultAnimated: defaultAnimated)
    }

    private mutating func schedule() -> Bool {
        defer { isScheduled = true }
        return !isScheduled && !isSuspended
    }

    private mutating func deliver(_ defaultAnimated: Bool) -> Bool {
        let value = pendingFlag ?? defaultAnimated
        pendingFlag = nil
        isScheduled = false
        isForced = false
        return value
    }
}
