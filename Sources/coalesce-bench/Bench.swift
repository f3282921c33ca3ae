import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

/// The benchmark's scenarios, one file each (`Burst.swift`, `FanOut.swift`, …). Each appends rows
/// (figures) and checks (exact deliveries) to the report; `Targets.swift` turns the figures into the
/// target rows of BENCHMARK.md.
///
/// Needs Observation (macOS 14 / iOS 17) for its baseline; `main.swift` says so on older systems.
@MainActor
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
struct Bench {
    let config: Config
    var report: Report

    /// Figures that the targets compare, kept as the scenarios measure them.
    var dirty: (ours: Double, foundation: Double, observation: Double, floorRatio: Double)?
    var fanOut: [Int: (ours: Double, foundation: Double?, floorRatio: Double)] = [:]
    /// Fan-out per context at N = 100 000 ÷ at N = 1 000, paired by round.
    var fanOutFlatness: Double?
    var idleBytes: Double?
    /// A request carrying a transaction ÷ a plain request on the same dirty context, paired.
    var transactionRatio: Double?
    var enqueueCost: [Int: Double] = [:]
    /// Foundation's `post(_:subject:)` of a typed message to one observer ÷ our enqueue of one already pending, paired.
    var typedMessageAdvantage: Double?
    /// A tracked `updateView` delivery ÷ an untracked one, paired.
    var trackedUpdateViewRatio: Double?
    /// Bytes a released tracked screen leaves behind minus what a released untracked one does (per screen).
    var releasedTrackedExtraBytes: Double?
    /// An animating scope's entry and exit with nothing pending ÷ a plain request on a dirty context, paired.
    var scopeEntryRatio: Double?
    /// A request on a dirty context while a task created in a scope runs ÷ the same with no scope alive.
    var scopedTaskRatio: Double?
    var source: (perTurn: SourceRun, perFrame: SourceRun, dispatch: SourceRun, observation: SourceRun)?

    init(config: Config, report: Report) {
        self.config = config
        self.report = report
    }

    // MARK: helpers

    let benchName = Notification.Name("coalesce-bench.update")

    /// The one Foundation queue every baseline uses, emptied between measurements (each run-loop turn
    /// posts what it holds).
    ///
    /// One, because Foundation keeps every `NotificationQueue` for its thread's life and walks them all
    /// on every turn: measured here, each extra queue made every later turn of this process slower
    /// (4 queues: +14 µs per turn; the seed shape's 1 000: +6.8 ms), which would bill Foundation's leak
    /// to every later figure, ours included.
    func foundationQueue() -> (NotificationQueue, MainCounter) {
        sharedFoundationQueue.counter.value = 0
        return (sharedFoundationQueue.queue, sharedFoundationQueue.counter)
    }
}

@MainActor private let sharedFoundationQueue:
    (queue: NotificationQueue, counter: MainCounter, token: any NSObjectProtocol) = {
        let counter = MainCounter()
        let center = NotificationCenter()
        let token = center.addObserver(forName: Notification.Name("coalesce-bench.update"), object: nil, queue: nil) {
            _ in
            counter.value += 1
        }
        return (NotificationQueue(notificationCenter: center), counter, token)
    }()

/// A model without Observation, for the plain-updater side of the tracking scenario (main thread only).
final class PlainModel: @unchecked Sendable {
    // @unchecked Sendable: read and written on the main thread only.
    var value = 0
}

/// A log of delivered flags (main thread only).
final class FlagLog: @unchecked Sendable {
    // @unchecked Sendable: appended to by an updater, which runs on the main thread only.
    var flags: [Bool] = []
}
