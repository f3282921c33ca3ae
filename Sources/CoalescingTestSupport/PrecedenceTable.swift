import NotificationCoalescing
import UpdateContext

/// One row of CONTRACT.md's precedence table: requests, the default flag, and the deliveries written
/// where they happen.
package struct PrecedenceRow: Sendable, CustomStringConvertible {
    /// Requests: `N`/`F`/`T` = `setNeedsUpdate(animated: nil/false/true)`; `U`, `U(F)`, `U(T)` =
    /// `update(animated:)`; `I` = `updateIfNeeded()`; `S`/`R` = `suspend()`/`resume()`; `|` = the end of
    /// a cycle.
    package let timeline: String
    package let defaultAnimated: Bool
    /// The timeline with each delivery (`n` or `a`) written where it happened.
    package let expected: String

    package init(_ timeline: String, defaultAnimated: Bool = false, _ expected: String) {
        self.timeline = timeline
        self.defaultAnimated = defaultAnimated
        self.expected = expected
    }

    /// Only the deliveries, in order (`"na"`).
    package var expectedDeliveries: String {
        expected.split(separator: " ").filter { $0 == "n" || $0 == "a" }.joined()
    }

    package var description: String { "\(timeline) (default \(defaultAnimated ? "animated" : "not animated"))" }
}

/// The contract's timelines, once, for every suite and the benchmark.
package enum PrecedenceTable {
    /// The rows of CONTRACT.md, in its order.
    package static let contract: [PrecedenceRow] = [
        PrecedenceRow("N N N |", "N N N | n"),
        PrecedenceRow("T T |", "T T | a"),
        PrecedenceRow("N T |", "N T | a"),
        PrecedenceRow("F T |", "F T n | a"),
        PrecedenceRow("T F |", "T F | n"),
        PrecedenceRow("F T F T |", "F T n F T n | a"),
        PrecedenceRow("N U |", "N U n |"),
        PrecedenceRow("T U |", "T U a |"),
        PrecedenceRow("F U(T) |", "F U(T) a |"),
        PrecedenceRow("T | N |", "T | a N | n"),
        PrecedenceRow("N |", defaultAnimated: true, "N | a"),
        PrecedenceRow("F |", defaultAnimated: true, "F | n"),
    ]

    /// Timelines beyond the contract's: suspension, `updateIfNeeded()`, repeated flags.
    package static let more: [PrecedenceRow] = [
        PrecedenceRow("| | |", "| | |"),
        PrecedenceRow("U", "U n"),
        PrecedenceRow("F T T |", "F T n T | a"),
        PrecedenceRow("F F T |", "F F T n | a"),
        PrecedenceRow("T U(F) |", "T U(F) n |"),
        PrecedenceRow("N I I |", "N I n I |"),
        PrecedenceRow("F T |", defaultAnimated: true, "F T n | a"),
        PrecedenceRow("S N N | | R |", "S N N | | R n |"),
        PrecedenceRow("S F T | R", "S F T | R n"),
        PrecedenceRow("S S T | R | R |", "S S T | R | R a |"),
        PrecedenceRow("S U(T) R", "S U(T) R a"),
        PrecedenceRow("S R |", "S R |"),
    ]
}

/// What playing a timeline gave.
package struct TimelineResult: Equatable, Sendable {
    /// The timeline with each delivery of the first updater written where it happened.
    package var written: String
    /// Whether every updater got the same deliveries as the first.
    package var updatersAgree: Bool
    /// Whether the scheduler was idle at the end (nothing left asking for a turn).
    package var endedIdle: Bool
}

/// Plays `timeline` on a fresh context driven by a `ManualScheduler` on the calling thread.
///
/// - Parameters:
///   - defaultAnimated: The context's default flag.
///   - updaters: How many updaters to register (all must get the same flags).
package func playTimeline(_ timeline: String, defaultAnimated: Bool = false, updaters: Int = 1) -> TimelineResult {
    let scheduler = ManualScheduler()
    let context = ViewUpdatingContext(animated: defaultAnimated, scheduler: scheduler, refreshEvents: [])
    var out: [String] = []
    var perUpdater = Array(repeating: [Bool](), count: updaters)
    for index in 0..<updaters {
        context.onUpdate { animated in
            perUpdater[index].append(animated)
            if index == 0 { out.append(animated ? "a" : "n") }
        }
    }
    for token in timeline.split(separator: " ") {
        out.append(String(token))
        playPrecedenceToken(token, on: context, scheduler: scheduler)
    }
    let agree = perUpdater.allSatisfy { $0 == perUpdater.first }
    return TimelineResult(written: out.joined(separator: " "), updatersAgree: agree, endedIdle: scheduler.isIdle)
}

/// One token of a precedence-table timeline (see `PrecedenceRow`).
package func playPrecedenceToken(_ token: Substring, on context: ViewUpdatingContext, scheduler: ManualScheduler) {
    switch token {
    case "N": context.setNeedsUpdate()
    case "F": context.setNeedsUpdate(animated: false)
    case "T": context.setNeedsUpdate(animated: true)
    case "U": context.update()
    case "U(F)": context.update(animated: false)
    case "U(T)": context.update(animated: true)
    case "I": context.updateIfNeeded()
    case "S": context.suspend()
    case "R": context.resume()
    case "|": scheduler.turn()
    default: preconditionFailure("playPrecedenceToken: unknown token \(token)")
    }
}
