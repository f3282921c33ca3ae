import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContextCore

/// Random programs of requests (main thread, other threads, early flushes, transactions whose completions or
/// custom values' `deinit`s are slow, animated scopes, `update()`, and `update()` by a coalesced notification's observer, for a context no
/// turn lists), turns, and updaters of known cost — some delivering a child inside their call — on a
/// `ManualScheduler`, whose clock moves only when an updater or a completion says, against the slow-updater
/// rule of DiagnosingUpdates.md: a context is named only if one of its updater's calls (nested deliveries
/// included) took longer than a frame, and at most once; an updater slow every time is named by its fourth call
/// at the latest (at once, when its turn served it alone; otherwise at its next delivery, or at its parent's
/// next timed one); the time of a completion, or of a transaction value going, is never blamed.
final class SlowUpdaterRandomTests: XCTestCase {
    func testSlowUpdatersAreNamedAndNoFastOneIsBlamed() {
        for seed in randomSeeds(fixed: [1, 2, 3, 5, 8, 13]) { run(seed: seed, steps: 400) }
    }

    private enum Kind { case fast, slow, parent }

    private final class Subject {
        let label: String
        let kind: Kind
        var context: ViewUpdatingContext!
        var child: Subject?
        var calls = 0
        /// The longest call of its updater, nested deliveries included (ns of the scheduler's clock).
        var longest: UInt64 = 0
        init(label: String, kind: Kind) { (self.label, self.kind) = (label, kind) }
    }

    /// Fast updaters take 9–10 ms a call, so that two calls in one turn add up to more than a frame.
    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = ManualScheduler()
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        let kinds: [Kind] = [.fast, .fast, .slow, .slow, .parent, .parent, .slow, .fast]
        let every = kinds.enumerated().map { Subject(label: "slow model \(seed) #\($0.offset)", kind: $0.element) }
        // The last two are delivered only by a coalesced notification's observer (`update()`): no turn lists them.
        let subjects = Array(every.prefix(6))
        let observed = Array(every.suffix(2))
        subjects[4].child = subjects[0]  // a fast child
        subjects[5].child = subjects[3]  // a slow child
        let queue = NotificationCoalescingContext(label: "slow model \(seed) queue", scheduler: scheduler)
        for (index, subject) in observed.enumerated() {
            queue.observe(Notification.Name("render \(index)")) { [unowned subject] _, _ in subject.context.update() }
        }
        for subject in every {
            let context = ViewUpdatingContext(label: subject.label, scheduler: scheduler, refreshEvents: [])
            subject.context = context
            var costs: [UInt64] = []
            for _ in 0..<8 {
                switch subject.kind {
                case .fast: costs.append(UInt64.random(in: 9...10, using: &random))
                case .slow: costs.append(UInt64.random(in: 17...40, using: &random))
                case .parent: costs.append(UInt64.random(in: 0...5, using: &random))
                }
            }
            context.onUpdate { [unowned subject] _ in
                let began = scheduler.now()
                scheduler.advanceClock(milliseconds: Int(costs[subject.calls % costs.count]))
                subject.calls += 1
                subject.child?.context.update()
                subject.longest = max(subject.longest, scheduler.now() &- began)
            }
        }
        var log: [String] = []
        for step in 0..<steps {
            let subject = subjects[Int.random(in: 0..<subjects.count, using: &random)]
            let context = subject.context!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                context.setNeedsUpdate()
                log.append("request \(subject.label)")
            case 30..<40:
                onAnotherThread { context.setNeedsUpdate() }
                log.append("request \(subject.label) from another thread")
            case 40..<48:
                onAnotherThread {
                    context.setNeedsUpdate(animated: false)
                    context.setNeedsUpdate(animated: true)
                }
                log.append("early flush of \(subject.label)")
            case 48..<58:
                var transaction = UpdateTransaction()
                let cost = Int.random(in: 20...50, using: &random)
                transaction.addCompletion { _ in scheduler.advanceClock(milliseconds: cost) }
                context.setNeedsUpdate(transaction: transaction)
                log.append("transaction with a \(cost) ms completion on \(subject.label)")
            case 58..<63:
                context.update()
                log.append("update() \(subject.label)")
            case 63..<70:
                let index = Int.random(in: 0..<observed.count, using: &random)
                queue.enqueue(Notification(name: Notification.Name("render \(index)")))
                log.append("a notification that renders \(observed[index].label)")
            case 70..<75:
                withUpdateAnimation(.easeIn(duration: 0.2)) { context.setNeedsUpdate() }
                log.append("animated request of \(subject.label)")
            case 75..<80:
                var transaction = UpdateTransaction()
                let cost = Int.random(in: 20...50, using: &random)
                transaction[GoingValueKey.self] = CallsBack { scheduler.advanceClock(milliseconds: cost) }
                context.setNeedsUpdate(transaction: transaction)
                log.append("transaction with a value taking \(cost) ms to go on \(subject.label)")
            default:
                break
            }
            if Bool.random(using: &random) {  // often one context a turn: what a slow turn can name at once
                scheduler.turn()
                log.append("turn")
            }
            for report in recorder.all where report.kind == .slowUpdater {
                guard let named = every.first(where: { $0.label == report.label }) else { continue }
                if named.longest <= UpdateDiagnostics.frameNanoseconds {
                    XCTFail(
                        "seed \(seed) step \(step): \(report.label) named, its longest call \(named.longest) ns: "
                            + "\(report.message); last steps \(log.suffix(10))")
                    return
                }
            }
        }
        _ = try? scheduler.runUntilIdle()
        for subject in every {
            let reports = recorder.reports(label: subject.label, kind: .slowUpdater)
            XCTAssertLessThanOrEqual(reports.count, 1, "seed \(seed): \(subject.label) reported more than once")
            if subject.kind == .slow && subject.calls >= 4 {
                XCTAssertEqual(
                    reports.count, 1, "seed \(seed): \(subject.label), slow in each of its \(subject.calls) calls")
            }
        }
    }
}

/// A transaction value whose `deinit` takes time (``SlowUpdaterRandomTests``).
private enum GoingValueKey: UpdateTransactionKey {
    static let defaultValue: CallsBack? = nil
}
