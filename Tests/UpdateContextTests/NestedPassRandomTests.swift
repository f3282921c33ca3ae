import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import UpdateContext

/// Random programs of nested passes on a `ManualScheduler`: view contexts and notification queues whose
/// updaters and handlers request, enqueue (from the main thread and from other threads) and run nested
/// passes in common and private modes, up to three levels deep; so do the `deinit`s of transaction values
/// that requests carry (user code wherever the context lets a transaction go: applying its inbox in a turn). Checked against a model that knows only the
/// promises:
///
/// - never recursively: an updater (a queue's handlers) never runs inside another call of itself;
/// - no view update in a private mode;
/// - liveness as on the main run loop: a common pass that begins outside every turn after a request delivers
///   it (a pass nested in a turn serves only what was listed since that turn began: the turn serves the rest);
/// - a queue posts its default-mode notifications once each, in the order they were enqueued;
/// - after the program, a run to idleness leaves nothing pending, and no listing is served twice per turn.
final class NestedPassRandomTests: XCTestCase {
    static let privateMode = RunLoop.Mode("nested.random.private")

    /// What the model knows of a context or a queue.
    final class Model {
        var active = false
        /// Whether a transaction value it let go is running user code (the context is calling out then, but its
        /// updater is not running).
        var lettingGo = false
        var callingOut: Bool { active || lettingGo }
        /// When the oldest request not yet shown was made (or its own delivery ended), if any.
        var owedSince: Int?
        /// Whether the request owed was made while its own updater or handler ran.
        var owedUntilEnd = false
        /// Queues: the default-mode notifications enqueued and not posted, in order, with when each was owed.
        var outstanding: [(id: Int, since: Int, untilEnd: Bool)] = []
        var posted: [Int] = []
        var violations: [String] = []
    }

    func testNestedPassesKeepEveryPromiseAtEveryLevel() {
        for seed in randomSeeds(fixed: [1, 2, 3, 4, 5, 12]) {
            run(seed: seed, steps: 200)
        }
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = ManualScheduler()
        var clock = 0
        var depth = 0
        var log: [String] = []
        let contexts = (0..<3).map { ViewUpdatingContext(label: "C\($0)", scheduler: scheduler, refreshEvents: []) }
        let contextModels = contexts.map { _ in Model() }
        let queues = (0..<2).map {
            NotificationCoalescingContext(label: "Q\($0)", center: NotificationCenter(), scheduler: scheduler)
        }
        let queueModels = queues.map { _ in Model() }
        var nextNotification = 0

        /// A request of context `index` is made now: it is owed from now on, unless an earlier one is.
        func owe(_ index: Int) -> Model {
            clock += 1
            let model = contextModels[index]
            if model.owedSince == nil {
                model.owedSince = clock
                model.owedUntilEnd = model.callingOut
            }
            return model
        }

        func request(_ index: Int, fromAnotherThread: Bool) {
            _ = owe(index)
            log.append("request C\(index)\(fromAnotherThread ? " (other thread)" : "")")
            if fromAnotherThread {
                onAnotherThread { [context = contexts[index]] in context.setNeedsUpdate() }
            } else {
                contexts[index].setNeedsUpdate()
            }
        }

        /// A request carrying a transaction whose value, when the context lets it go on the main thread (replaced
        /// by a later one, or delivered), acts as an updater would: the context counts as calling out meanwhile.
        func requestCarryingUserCode(_ index: Int, fromAnotherThread: Bool) {
            let model = owe(index)
            log.append("request C\(index) with a transaction value\(fromAnotherThread ? " (other thread)" : "")")
            let value = CallsBack {
                // The last reference may go on the requesting thread (its closure), where nothing is modelled.
                guard Thread.isMainThread else { return }
                log.append("\(String(repeating: "  ", count: depth))C\(index)'s transaction value goes")
                let wasLettingGo = model.lettingGo
                model.lettingGo = true
                if Bool.random(using: &random) {  // its own context, from another thread, then a modal wait
                    request(index, fromAnotherThread: true)
                    if depth < 3 && Bool.random(using: &random) { turn(privately: false) }
                }
                inner(allowsNestedPass: true)
                model.lettingGo = wasLettingGo
                settle(model)
            }
            var transaction = UpdateTransaction()
            transaction[UserValueKey.self] = value
            if fromAnotherThread {
                onAnotherThread { [context = contexts[index], transaction] in
                    context.setNeedsUpdate(transaction: transaction)
                }
            } else {
                contexts[index].setNeedsUpdate(transaction: transaction)
            }
        }

        func enqueue(_ index: Int, privately: Bool) {
            clock += 1
            nextNotification += 1
            let id = nextNotification
            let model = queueModels[index]
            let note = Notification(
                name: Notification.Name(privately ? "private" : "default"), object: nil, userInfo: ["id": id])
            log.append("enqueue \(id) on Q\(index)\(privately ? " (private)" : "")")
            if privately {
                queues[index].enqueue(note, coalesceMask: [], forModes: [Self.privateMode])
            } else {
                model.outstanding.append((id, clock, model.callingOut))
                queues[index].enqueue(note, coalesceMask: [])
            }
        }

        /// A pass at any level; one outside every turn is checked when it returns.
        func turn(privately: Bool) {
            clock += 1
            let began = clock
            let outermost = depth == 0
            log.append("\(String(repeating: "  ", count: depth))turn\(privately ? " (private)" : "")")
            depth += 1
            let served = privately ? scheduler.turn(mode: Self.privateMode) : scheduler.turn()
            depth -= 1
            // At most three listings a client: the main thread's, another thread's, parked (no growth with nesting).
            if served > (contexts.count + queues.count) * 3 {
                contextModels[0].violations.append("a turn served \(served) listings")
            }
            guard !privately, outermost else { return }
            // Outside every turn nothing calls out: everything owed before the pass began has been served.
            for (index, model) in contextModels.enumerated() {
                if let since = model.owedSince, since < began {
                    model.violations.append("C\(index) requested at \(since), not delivered by the pass at \(began)")
                }
            }
            for (index, model) in queueModels.enumerated() {
                if let first = model.outstanding.first(where: { $0.since < began }) {
                    model.violations.append(
                        "Q\(index)'s notification \(first.id) enqueued at \(first.since), not posted by the pass at \(began)"
                    )
                }
            }
        }

        /// A modal wait that turns until nothing is left (`runUntilIdle()` inside an updater or handler): it serves
        /// what was listed since the turn under way began, and must end.
        func runUntilIdle() {
            clock += 1
            log.append("\(String(repeating: "  ", count: depth))run until idle")
            depth += 1
            if (try? scheduler.runUntilIdle(maxTurns: 50)) == nil {
                contextModels[0].violations.append("a modal wait did not end in 50 turns")
            }
            depth -= 1
        }

        /// What an updater or a handler does: a few random actions, a nested pass among them.
        func inner(allowsNestedPass: Bool) {
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<25: request(Int.random(in: 0..<contexts.count, using: &random), fromAnotherThread: false)
                case 25..<40: request(Int.random(in: 0..<contexts.count, using: &random), fromAnotherThread: true)
                case 40..<60:
                    enqueue(Int.random(in: 0..<queues.count, using: &random), privately: Bool.random(using: &random))
                case 60..<68:
                    if allowsNestedPass && depth < 3 { runUntilIdle() }
                default:
                    if allowsNestedPass && depth < 3 {
                        turn(privately: Int.random(in: 0..<4, using: &random) == 0)
                    }
                }
            }
        }

        func enter(_ model: Model, _ name: String) {
            if model.active { model.violations.append("\(name) called recursively") }
            model.active = true
            clock += 1
        }

        /// Leaving a call: what it requested of itself is owed from now on.
        func leave(_ model: Model) {
            model.active = false
            settle(model)
        }

        /// Once no longer calling out, what it requested meanwhile is owed from now on.
        func settle(_ model: Model) {
            guard !model.callingOut else { return }
            clock += 1
            if model.owedSince != nil, model.owedUntilEnd { (model.owedSince, model.owedUntilEnd) = (clock, false) }
            for index in model.outstanding.indices where model.outstanding[index].untilEnd {
                model.outstanding[index] = (model.outstanding[index].id, clock, false)
            }
        }

        for (index, context) in contexts.enumerated() {
            let model = contextModels[index]
            context.onUpdate { _ in
                enter(model, "C\(index)")
                if !scheduler.isCommon(scheduler.currentMode ?? .default) {
                    model.violations.append("C\(index) delivered in a private mode")
                }
                model.owedSince = nil
                model.owedUntilEnd = false
                log.append("\(String(repeating: "  ", count: depth))C\(index) delivers")
                inner(allowsNestedPass: true)
                leave(model)
            }
        }
        for (index, queue) in queues.enumerated() {
            let model = queueModels[index]
            queue.observe(Notification.Name("default")) { _, note in
                enter(model, "Q\(index)")
                let id = note.userInfo?["id"] as? Int ?? -1
                log.append("\(String(repeating: "  ", count: depth))Q\(index) posts \(id)")
                model.posted.append(id)
                if let position = model.outstanding.firstIndex(where: { $0.id == id }) {
                    if position != 0 {
                        model.violations.append("Q\(index) posted \(id) before \(model.outstanding[0].id)")
                    }
                    model.outstanding.remove(at: position)
                } else {
                    model.violations.append("Q\(index) posted \(id) twice or unasked")
                }
                inner(allowsNestedPass: true)
                leave(model)
            }
            queue.observe(Notification.Name("private")) { _, _ in
                enter(model, "Q\(index)")
                inner(allowsNestedPass: false)  // a nested loop inside a private-mode post: not modelled
                leave(model)
            }
        }

        for step in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30: request(Int.random(in: 0..<contexts.count, using: &random), fromAnotherThread: false)
            case 30..<40: request(Int.random(in: 0..<contexts.count, using: &random), fromAnotherThread: true)
            case 40..<45:
                requestCarryingUserCode(
                    Int.random(in: 0..<contexts.count, using: &random), fromAnotherThread: Bool.random(using: &random))
            case 45..<65:
                enqueue(
                    Int.random(in: 0..<queues.count, using: &random),
                    privately: Int.random(in: 0..<4, using: &random) == 0)
            case 65..<75: turn(privately: true)
            default: turn(privately: false)
            }
            let violations = (contextModels + queueModels).flatMap(\.violations)
            if !violations.isEmpty {
                XCTFail(
                    "seed \(seed) step \(step): \(violations); last steps:\n\(log.suffix(30).joined(separator: "\n"))")
                return
            }
        }
        do {
            // Private-mode notifications wait for a private pass; what their handlers ask for, for a common one.
            for _ in 0..<10 where !scheduler.isIdle {
                depth += 1  // (unmodelled turns: what their handlers run is nested in them)
                defer { depth -= 1 }
                scheduler.turn(mode: Self.privateMode)
                _ = try scheduler.runUntilIdle()
            }
            try scheduler.expectIdle()
        } catch {
            XCTFail("seed \(seed): \(error)")
        }
        for (index, model) in contextModels.enumerated() where model.owedSince != nil {
            XCTFail("seed \(seed): C\(index) still owed a delivery after a run to idleness")
        }
        for (index, model) in queueModels.enumerated() where !model.outstanding.isEmpty {
            XCTFail("seed \(seed): Q\(index) never posted \(model.outstanding.map(\.id))")
        }
        let violations = (contextModels + queueModels).flatMap(\.violations)
        XCTAssertEqual(violations, [], "seed \(seed)")
    }
}

/// A transaction value that runs user code when it goes (``NestedPassRandomTests``).
private enum UserValueKey: UpdateTransactionKey {
    static let defaultValue: CallsBack? = nil
}
