import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContextCore

/// Random programs of requests (main thread, other threads, early flushes, transactions whose completions or
/// custom values' `deinit`s are slow, animated scopes, `update()` outside a turn and by a coalesced notification's
/// observer inside one), turns, pauses, and updaters of known cost — some delivering a child inside their call — on
/// a `ManualScheduler`, whose clock moves only when the program says, against the slow-report rule of
/// DiagnosingUpdates.md:
///
/// - a turn slower than a frame is reported (`slowTurn`) with its duration, naming contexts it served — at most
///   once a second per scheduler, and never a context a slow report named less than a second before;
/// - a delivery made outside every turn (`update()` where no turn is under way) slower than a frame names its
///   context (`slowUpdater`), unless a slow report named it less than a second before;
/// - whenever those rules allow a report, it is made; nothing else is reported.
final class SlowUpdaterRandomTests: XCTestCase {
    func testSlowTurnsAndSlowDeliveriesAreReportedAsTheRuleSays() {
        for seed in randomSeeds(fixed: [1, 2, 3, 5, 8, 13]) { run(seed: seed, steps: 400) }
    }

    private enum Kind { case fast, slow, parent }

    private final class Subject {
        let label: String
        let kind: Kind
        var context: ViewUpdatingContext!
        var child: Subject?
        var calls = 0
        /// How long its last call took, nested deliveries included (ns of the scheduler's clock).
        var lastCall: UInt64 = 0
        init(label: String, kind: Kind) { (self.label, self.kind) = (label, kind) }
    }

    /// A report, with the scheduler's clock when it was made.
    private struct Made {
        let report: UpdateDiagnostics.Report
        let at: UInt64
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = ManualScheduler(label: "slow model \(seed) scheduler")
        let made = CoalescingRuntime.Locked<[Made]>([])
        let previous = UpdateDiagnostics.handler
        UpdateDiagnostics.handler = { report in made.withLock { $0.append(Made(report: report, at: scheduler.now())) } }
        defer { UpdateDiagnostics.handler = previous }
        let second = UpdateDiagnostics.reportInterval
        let frame = UpdateDiagnostics.frameNanoseconds
        let kinds: [Kind] = [.fast, .fast, .slow, .slow, .parent, .parent, .slow, .fast]
        let every = kinds.enumerated().map { Subject(label: "slow model \(seed) #\($0.offset)", kind: $0.element) }
        // The last two are delivered only by a coalesced notification's observer (`update()` inside a turn).
        let subjects = Array(every.prefix(6))
        let observed = Array(every.suffix(2))
        subjects[4].child = subjects[0]  // a fast child
        subjects[5].child = subjects[3]  // a slow child
        let queue = NotificationCoalescingContext(label: "slow model \(seed) queue", scheduler: scheduler)
        for (index, subject) in observed.enumerated() {
            queue.observe(Notification.Name("render \(index)")) { [unowned subject] _, _ in subject.context.update() }
        }
        var depth = 0
        /// The subjects a turn under way delivered as its own clients (not inside another delivery).
        var servedInTurn: Set<String> = []
        var inTurn = false
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
                if inTurn && depth == 0 && !observed.contains(where: { $0 === subject }) {
                    servedInTurn.insert(subject.label)
                }
                depth += 1
                defer { depth -= 1 }
                let began = scheduler.now()
                scheduler.advanceClock(milliseconds: Int(costs[subject.calls % costs.count]))
                subject.calls += 1
                subject.child?.context.update()
                subject.lastCall = scheduler.now() &- began
            }
        }

        var log: [String] = []
        var checked = 0
        var lastSlowTurn: UInt64?
        var namedAt: [String: UInt64] = [:]
        /// Whether `label` was named by a slow report less than a second before `now`.
        func namedRecently(_ label: String, _ now: UInt64) -> Bool {
            namedAt[label].map { now &- $0 < second } ?? false
        }
        func fail(_ step: Int, _ what: String) {
            XCTFail("seed \(seed) step \(step): \(what); last steps \(log.suffix(12))")
        }
        /// Checks the reports made since the last check against the rule, and records who was named.
        func checkReports(step: Int) -> [Made] {
            let new = Array(made.withLock { $0 }.dropFirst(checked))
            checked += new.count
            for item in new {
                let report = item.report
                switch report.kind {
                case .slowTurn:
                    guard report.label == scheduler.label else { continue }  // another test's scheduler
                    if (report.duration ?? 0) * 1e9 <= Double(frame) {
                        fail(step, "a slow turn of \(report.duration ?? 0) s reported")
                    }
                    if let last = lastSlowTurn, item.at &- last < second {
                        fail(step, "two slow turns reported within a second")
                    }
                    lastSlowTurn = item.at
                    let names = every.map(\.label).filter { report.message.contains("\"\($0)\"") }
                    for name in names {
                        if namedRecently(name, item.at) { fail(step, "\(name) named twice within a second") }
                        namedAt[name] = item.at
                    }
                    if report.message.contains("\"\(queue.label)\"") { namedAt[queue.label] = item.at }
                case .slowUpdater:
                    guard let subject = every.first(where: { $0.label == report.label }) else { continue }
                    if subject.lastCall <= frame {
                        fail(step, "\(subject.label) named after a call of \(subject.lastCall) ns")
                    }
                    if namedRecently(subject.label, item.at) {
                        fail(step, "\(subject.label) named twice within a second")
                    }
                    namedAt[subject.label] = item.at
                case .schedulerNotTurning:
                    continue  // a pause while a turn is asked for: not this model's subject
                default:
                    if every.contains(where: { $0.label == report.label }) || report.label == scheduler.label {
                        fail(step, "an unexpected report: \(report)")
                    }
                }
            }
            return new
        }

        for step in 0..<steps {
            let subject = subjects[Int.random(in: 0..<subjects.count, using: &random)]
            let context = subject.context!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                context.setNeedsUpdate()
                log.append("request \(subject.label)")
            case 30..<38:
                onAnotherThread { context.setNeedsUpdate() }
                log.append("request \(subject.label) from another thread")
            case 38..<44:
                onAnotherThread {
                    context.setNeedsUpdate(animated: false)
                    context.setNeedsUpdate(animated: true)
                }
                log.append("early flush of \(subject.label), from another thread")
            case 44..<52:
                var transaction = UpdateTransaction()
                let cost = Int.random(in: 20...50, using: &random)
                transaction.addCompletion { _ in scheduler.advanceClock(milliseconds: cost) }
                context.setNeedsUpdate(transaction: transaction)
                log.append("transaction with a \(cost) ms completion on \(subject.label)")
            case 52..<60:
                // Outside every turn: timed on its own (its completions, run after it, are not its time).
                let before = made.withLock { $0.count }
                let wasNamed = namedRecently(subject.label, scheduler.now())
                context.update()
                log.append("update() \(subject.label): \(subject.lastCall) ns")
                let reported = made.withLock { $0.dropFirst(before) }.contains {
                    $0.report.kind == .slowUpdater && $0.report.label == subject.label
                }
                if subject.lastCall > frame && !wasNamed && !reported {
                    fail(step, "\(subject.label)'s update() took \(subject.lastCall) ns and named nobody")
                }
            case 60..<68:
                let index = Int.random(in: 0..<observed.count, using: &random)
                queue.enqueue(Notification(name: Notification.Name("render \(index)")))
                log.append("a notification that renders \(observed[index].label)")
            case 68..<74:
                withUpdateAnimation(.easeIn(duration: 0.2)) { context.setNeedsUpdate() }
                log.append("animated request of \(subject.label)")
            case 74..<80:
                var transaction = UpdateTransaction()
                let cost = Int.random(in: 20...50, using: &random)
                transaction[GoingValueKey.self] = CallsBack { scheduler.advanceClock(milliseconds: cost) }
                context.setNeedsUpdate(transaction: transaction)
                log.append("transaction with a value taking \(cost) ms to go on \(subject.label)")
            case 80..<86:
                let pause = Int.random(in: 100...1_200, using: &random)
                scheduler.advanceClock(milliseconds: pause)
                log.append("\(pause) ms pass")
            default:
                break
            }
            if Bool.random(using: &random) {
                _ = checkReports(step: step)
                let began = scheduler.now()
                servedInTurn = []
                inTurn = true
                scheduler.turn()
                inTurn = false
                let end = scheduler.now()
                log.append("turn of \(end &- began) ns serving \(servedInTurn.sorted())")
                let reportedTurn = checkReports(step: step).contains {
                    $0.report.kind == .slowTurn && $0.report.label == scheduler.label
                }
                let allowed = lastSlowTurn.map { end &- $0 >= second } ?? true
                if end &- began > frame && allowed && !reportedTurn
                    && servedInTurn.contains(where: { !namedRecently($0, end) })
                {
                    fail(step, "a turn of \(end &- began) ns serving \(servedInTurn.sorted()) was not reported")
                }
            }
            _ = checkReports(step: step)
        }
        _ = try? scheduler.runUntilIdle()
        _ = checkReports(step: steps)
        let slow = made.withLock { $0 }.filter { $0.report.kind == .slowTurn && $0.report.label == scheduler.label }
        XCTAssertFalse(slow.isEmpty, "seed \(seed): no slow turn was reported in \(steps) steps")
    }
}

/// A transaction value whose `deinit` takes time (``SlowUpdaterRandomTests``).
private enum GoingValueKey: UpdateTransactionKey {
    static let defaultValue: CallsBack? = nil
}
