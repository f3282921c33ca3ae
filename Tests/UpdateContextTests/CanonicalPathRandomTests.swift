import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The `@Observable` state a random probe's `updateView` reads (tracked by `startUpdatingView()`).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class TrackedValue {
    var value = 0
}

/// The canonical path as an app drives it, at random, checked after every step against a model of what
/// each delivery must *show* — the values `updateView` read, not only its flag — and of when each
/// transaction's completion runs: `@NeedsUpdate` properties with each flag, state changed through the
/// closure form, `StateUpdatingContext.modify` (plain, in scopes, with a transaction), scopes with and
/// without an animation, `Task`s created in scopes, `update()`, turns, and releases of the owner at random
/// points (between steps, inside a delivery — the early flush included — and on another thread), and
/// changes to an `@Observable` model that `updateView` reads on one branch of state Observation does not
/// see (tracked: the first change after a delivery that read it requests, in its scope; later ones before
/// the next delivery, or after one that did not read it, request nothing).
///
/// The model: `ReferenceRules` (CONTRACT.md's table) decides the deliveries; a delivery shows the values as
/// they are when it is made, so the early flush of an animated change shows the values before it; a
/// scope's completion runs once, when its last request was absorbed by a delivery (and the scope ended),
/// told `released` when an owner went with one of its requests pending, and `nothing requested` when the
/// scope requested nothing. `RANDOM_SEED=… swift test --filter CanonicalPathRandomTests` replays a seed.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class CanonicalPathRandomTests: XCTestCase {
    /// A controller on the canonical path.
    final class Probe: ViewUpdating, @unchecked Sendable {
        // @unchecked Sendable: used on the main thread only; a task created in a scope captures it weakly
        // and runs on the main actor.
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var plain = 0
        @NeedsUpdate(animated: false) var quiet = 0
        @NeedsUpdate(animated: true) var lively = 0
        var hidden = 0
        let model = TrackedValue()
        var shown: [String] = []
        var animations: [String?] = []
        var onDelivery: (() -> Void)?
        let id: Int

        init(scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            Counter.nextID += 1
            id = Counter.nextID
        }

        /// The model is read only while `hidden` is even: a branch on state Observation does not see.
        var values: String { "\(plain),\(quiet),\(lively),\(hidden),\(hidden % 2 == 0 ? "\(model.value)" : "-")" }

        func updateView(animated: Bool) {
            shown.append("\(values)\(animated ? "a" : "n")")
            animations.append(updateContext.deliveryTransaction?.animation.map(CanonicalPathRandomTests.label))
            Counter.delivered(id)
            onDelivery?()
        }
    }

    /// A `StateUpdatingContext` and what its renderer drew.
    final class StateProbe: @unchecked Sendable {
        // @unchecked Sendable: main thread only.
        let context: StateUpdatingContext<Int>
        var shown: [String] = []
        var onDelivery: (() -> Void)?
        let id: Int
        init(scheduler: ManualScheduler) {
            context = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
            Counter.nextID += 1
            id = Counter.nextID
            context.onRender { [unowned self] state, _, animated in
                shown.append("\(state)\(animated ? "a" : "n")")
                Counter.delivered(id)
                onDelivery?()
            }
        }
    }

    /// Deliveries so far, over all subjects (main thread).
    enum Counter {
        nonisolated(unsafe) static var deliveries = 0
        /// Per probe (by id): deliveries (renders, for a state probe) so far.
        nonisolated(unsafe) static var counts: [Int: Int] = [:]
        nonisolated(unsafe) static var nextID = 0
        nonisolated(unsafe) static var step = 0
        static func delivered(_ id: Int) {
            deliveries += 1
            counts[id, default: 0] += 1
        }
    }

    /// One subject in the model.
    final class Subject {
        var probe: Probe?
        var stateProbe: StateProbe?
        var rules = ReferenceRules(defaultAnimated: false)
        var values = [0, 0, 0, 0, 0]  // plain, quiet, lively, hidden, model; or the state in [0]
        /// Whether the probe's tracking is armed: by every delivery; a reported change disarms it.
        var armed = true
        var expectedShown: [String] = []
        /// StateUpdatingContext renders only a changed state (or a forced delivery).
        var lastRendered: Int?
        /// Scopes with a request pending here, once per request.
        var pendingScopes: [Scope] = []
        /// A subscription's transaction (what `requestUpdates(from:transaction:)` requests with per element):
        /// its renewal, its animation, and the instance of its completion now (renewed once it has run).
        var subscription: (renewable: UpdateTransaction, id: Int, animation: UpdateAnimation?)?
        var subscriptionInstance: Scope?
        var releaseInside = false
        /// Whether the model has seen it go.
        var modelGone = false

        /// The id of its probe (kept after a release).
        var id = 0

        var isState: Bool { stateProbe != nil }
        var isAlive: Bool { probe != nil || stateProbe != nil }
        var shown: [String] { probe?.shown ?? stateProbe?.shown ?? [] }
        var valueText: String {
            if isState { return "\(values[0])" }
            let model = values[3] % 2 == 0 ? "\(values[4])" : "-"
            return values[0..<4].map(String.init).joined(separator: ",") + ",\(model)"
        }
    }

    /// A scope (or a transaction given to one request) with a completion.
    final class Scope {
        let id: Int
        /// How its completion's calls are recorded: `s<id>`, or `q<subscription>` for a subscription's.
        var name: String
        let animation: UpdateAnimation?
        var pending = 0
        /// Whether anything requested with it (else its completion is told "nothing requested").
        var requested = false
        var isOpen = true
        var spent = false
        var shown = false
        var released = false
        /// The deliveries that absorbed its requests: (probe id, that probe's count after it).
        var absorbedBy: [(Int, Int)] = []
        init(id: Int, animation: UpdateAnimation?, name: String? = nil) {
            self.id = id
            self.name = name ?? "s\(id)"
            self.animation = animation
        }
    }

    static func label(_ animation: UpdateAnimation) -> String {
        animation == .default ? "default" : "\(animation)"
    }

    func testRandomCanonicalPathsShowWhatTheModelSays() {
        for seed in randomSeeds(fixed: [3, 7, 11, 1_234, 2_026]) {
            run(seed: seed, steps: 700)
        }
    }

    // swiftlint:disable:next function_body_length
    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = ManualScheduler()
        var subjects: [Subject] = []
        var calls: [String] = []
        var expectedCalls: [String] = []
        /// Per shown scope: the step it must run in, and the deliveries it must run after.
        var expectedAfter: [Int: (Int, [(Int, Int)])] = [:]
        /// Per shown completion: the step it ran in, and every probe's count then.
        let ranAt = NotificationCoalescing.Locked<[Int: (Int, [Int: Int])]>([:])
        let recorded = NotificationCoalescing.Locked<[String]>([])
        var nextValue = 1
        var nextScope = 0
        var modelCounter = 0
        var nextSubscription = 0
        var log: [String] = []
        let animations: [UpdateAnimation?] = [
            nil, .default, .linear(duration: 0.2), .spring(duration: 0.4, bounce: 0.2),
        ]

        func recordSubscriptionCall(_ id: Int) -> @MainActor @Sendable (UpdateCompletion) -> Void {
            { completion in
                let text: String
                switch completion {
                case .shown: text = "q\(id):shown"
                case .dropped(.contextReleased): text = "q\(id):released"
                case .dropped(.noUpdaters): text = "q\(id):nothing shown"
                case .dropped(.nothingRequested): text = "q\(id):nothing requested"
                }
                recorded.withLock { $0.append(text) }
            }
        }

        func fresh() -> Subject {
            let subject = Subject()
            if Int.random(in: 0..<4, using: &random) == 0 {
                let probe = StateProbe(scheduler: scheduler)
                subject.stateProbe = probe
                subject.id = probe.id
                // onRender requests its first render.
                subject.rules.setNeeds(nil)
                probe.onDelivery = { [unowned subject] in
                    if subject.releaseInside { subject.stateProbe = nil }
                }
            } else {
                let probe = Probe(scheduler: scheduler)
                subject.probe = probe
                subject.id = probe.id
                onMainActor(probe) { $0.startUpdatingView() }
                subject.rules.update(false)  // the first render, at once: the only one of the first cycle
                if Bool.random(using: &random) {
                    let animation = animations.randomElement(using: &random)!
                    var transaction = UpdateTransaction(animation: animation)
                    transaction.addCompletion(recordSubscriptionCall(nextSubscription))
                    subject.subscription = (transaction.withRenewableCompletions, nextSubscription, animation)
                    nextSubscription += 1
                }
                subject.expectedShown.append("0,0,0,0,0n")
                modelCounter += 1
                probe.onDelivery = { [unowned subject] in
                    if subject.releaseInside { subject.probe = nil }
                }
            }
            return subject
        }

        // MARK: The model's events

        /// A delivery the rules recorded: it shows the values now, and absorbs every request pending.
        func modelDelivered(_ subject: Subject, forced: Bool) {
            let animated = subject.rules.deliveries.last!
            var rendered = true
            if subject.isState {
                if forced || subject.lastRendered != subject.values[0] {
                    subject.expectedShown.append("\(subject.values[0])\(animated ? "a" : "n")")
                    subject.lastRendered = subject.values[0]
                    modelCounter += 1
                } else {
                    rendered = false
                }
            } else {
                subject.expectedShown.append("\(subject.valueText)\(animated ? "a" : "n")")
                // The delivery tracked what it read: the model, on the even branch only.
                subject.armed = subject.values[3] % 2 == 0
                modelCounter += 1
            }
            let absorbed = subject.pendingScopes
            subject.pendingScopes = []
            for scope in absorbed {
                scope.pending -= 1
                scope.shown = true
                if rendered { scope.absorbedBy.append((subject.id, subject.expectedShown.count)) }
            }
            for scope in absorbed { finishIfDone(scope) }
        }

        func finishIfDone(_ scope: Scope) {
            guard scope.pending == 0, !scope.isOpen, !scope.spent else { return }
            scope.spent = true
            if scope.released {
                expectedCalls.append("\(scope.name):released")
            } else if scope.shown {
                expectedCalls.append("\(scope.name):shown")
                if scope.name.hasPrefix("s") { expectedAfter[scope.id] = (Counter.step, scope.absorbedBy) }
            } else {
                expectedCalls.append("\(scope.name):nothing \(scope.requested ? "shown" : "requested")")
            }
        }

        /// A request with effective flag `flag` (and `transaction`'s animation label when it carries one)
        /// made around `change`: the rules may flush first (showing the values before the change).
        /// `holdsFirst`: a request made directly (`setNeedsUpdate(transaction:)`, a subscription's element,
        /// `modify`) claims the completion on entry, before the early flush it causes inside; a property or
        /// the closure form flushes before its change, before the request exists, so that flush can finish
        /// the completion first.
        /// `alsoJoining`: the scope an explicit transaction's request made in a body joins (its completion waits
        /// for the request too, as `scope`'s does).
        func modelRequest(
            _ subject: Subject, flag: Bool?, transaction: String??, scope: Scope?, alsoJoining outer: Scope? = nil,
            holdsFirst: Bool = false, change: () -> Void
        ) {
            let scopes = [scope, outer].compactMap { $0 }
            var joined = holdsFirst ? scopes.filter { !$0.spent } : []
            for joining in joined {
                joining.pending += 1
                joining.requested = true
            }
            let before = subject.rules.deliveries.count
            if let transaction {
                subject.rules.setNeeds(transaction: transaction, completion: nil)
            } else {
                subject.rules.setNeeds(flag)
            }
            if subject.rules.deliveries.count > before { modelDelivered(subject, forced: false) }
            change()
            if !holdsFirst {
                joined = scopes.filter { !$0.spent }
                for joining in joined {
                    joining.pending += 1
                    joining.requested = true
                }
            }
            subject.pendingScopes.append(contentsOf: joined)
        }

        /// Entering a scope that animates or carries a completion, on the main thread: every context with
        /// something pending delivers it now, as its end of cycle would.
        func modelFlushAll() {
            for subject in subjects where subject.isAlive {
                let before = subject.rules.deliveries.count
                subject.rules.endOfCycle()
                if subject.rules.deliveries.count > before { modelDelivered(subject, forced: false) }
            }
        }

        func modelTurn() {
            for subject in subjects where subject.isAlive {
                let before = subject.rules.deliveries.count
                subject.rules.endOfCycle()
                if subject.rules.deliveries.count > before { modelDelivered(subject, forced: false) }
            }
        }

        func modelReleased(_ subject: Subject) {
            let dropped = subject.pendingScopes
            subject.pendingScopes = []
            for scope in dropped {
                scope.pending -= 1
                scope.released = true
            }
            for scope in dropped { finishIfDone(scope) }
        }

        /// An owner goes when the operation that dropped its last reference returns (inside a delivery:
        /// the updater's own reference goes as it returns): its pending requests are dropped then.
        func settleReleases() {
            for s in subjects where !s.isAlive && !s.modelGone {
                s.modelGone = true
                log.append("(\(s.id) released)")
                modelReleased(s)
            }
        }

        /// One property change on `subject` through a random route, in the model and for real. Inside a
        /// scope, `scope` and its animation decide the effective flag.
        func change(_ subject: Subject, scope: Scope?, nestedAnimation: UpdateAnimation?? = nil) {
            let value = nextValue
            nextValue += 1
            let route = Int.random(in: 0..<6, using: &random)
            // In a nested scope the innermost animation (even none) wins; the completion is the outer one's.
            let scoped: String?? = scope.map { s in (nestedAnimation ?? s.animation).map(Self.label) }
            guard subject.isAlive else { return }  // released inside a delivery earlier in this step
            if route == 5 {
                // A plain non-animated request (no change of its own): a later animated change flushes first.
                log.append("\(subject.id).setNeedsUpdate(F)\(scope.map { " in s\($0.id)" } ?? "")")
                let (effective, transaction) = Self.effective(false, scoped)
                modelRequest(subject, flag: effective, transaction: transaction, scope: scope) {}
                if let state = subject.stateProbe {
                    state.context.context.setNeedsUpdate(animated: false)
                } else {
                    subject.probe!.updateContext.setNeedsUpdate(animated: false)
                }
                return
            }
            if let state = subject.stateProbe {
                let flag: Bool? = [nil, false, true].randomElement(using: &random)!
                log.append(
                    "\(subject.id).modify(\(flag.map { $0 ? "T" : "F" } ?? "N"))=\(value)\(scope.map { " in s\($0.id)" } ?? "")"
                )
                let (effective, transaction) = Self.effective(flag, scoped)
                modelRequest(subject, flag: effective, transaction: transaction, scope: scope, holdsFirst: true) {
                    subject.values[0] = value
                }
                state.context.modify(animated: flag) { $0 = value }
                return
            }
            let probe = subject.probe!
            if route == 4 {
                // A change to the tracked model: Observation reports it (at its willSet, before the store)
                // only if a delivery armed the tracking since the last report.
                log.append(
                    "\(subject.id).model=\(value)\(subject.armed ? "" : " (unreported)")\(scope.map { " in s\($0.id)" } ?? "")"
                )
                if subject.armed {
                    subject.armed = false
                    let (effective, transaction) = Self.effective(nil, scoped)
                    modelRequest(subject, flag: effective, transaction: transaction, scope: scope, holdsFirst: true) {
                        subject.values[4] = value
                    }
                } else {
                    subject.values[4] = value
                }
                probe.model.value = value
                return
            }
            let index = route
            let flag: Bool?
            switch route {
            case 0: flag = nil
            case 1: flag = false
            case 2: flag = true
            default: flag = [nil, false, true].randomElement(using: &random)!
            }
            let names = ["plain", "quiet", "lively", "hidden(\(flag.map { $0 ? "T" : "F" } ?? "N"))"]
            log.append("\(subject.id).\(names[index])=\(value)\(scope.map { " in s\($0.id)" } ?? "")")
            let (effective, transaction) = Self.effective(flag, scoped)
            modelRequest(subject, flag: effective, transaction: transaction, scope: scope) {
                subject.values[index] = value
            }
            switch route {
            case 0: probe.plain = value
            case 1: probe.quiet = value
            case 2: probe.lively = value
            default: probe.setNeedsUpdate(animated: flag) { probe.hidden = value }
            }
        }

        /// A transaction with a completion of its own, given to one request (`modify(transaction:)` for a
        /// state subject, `setNeedsUpdate(transaction:)` before a hidden change otherwise); inside a scope's
        /// body the request joins the scope too (its own animation, even none, wins).
        func explicitTransaction(on subject: Subject, joining outer: Scope?) {
            guard subject.isAlive else { return }
            let scope = Scope(id: nextScope, animation: animations.randomElement(using: &random)!)
            nextScope += 1
            var transaction = UpdateTransaction(animation: scope.animation)
            transaction.addCompletion(recordCall(scope.id))
            let value = nextValue
            nextValue += 1
            log.append(
                "\(subject.id).transaction s\(scope.id) \(scope.animation.map(Self.label) ?? "-")=\(value)"
                    + (outer.map { " in s\($0.id)" } ?? ""))
            let label: String?? = .some(scope.animation.map(Self.label))
            modelRequest(subject, flag: nil, transaction: label, scope: scope, alsoJoining: outer, holdsFirst: true) {
                subject.values[subject.isState ? 0 : 3] = value
            }
            if let state = subject.stateProbe {
                state.context.modify(transaction: transaction) { $0 = value }
            } else if let probe = subject.probe {
                // Request before you change (the documented order for the plain call).
                probe.updateContext.setNeedsUpdate(transaction: transaction)
                probe.hidden = value
            }
            scope.isOpen = false
            finishIfDone(scope)
        }

        func recordCall(_ id: Int) -> @MainActor @Sendable (UpdateCompletion) -> Void {
            { completion in
                let text: String
                switch completion {
                case .shown:
                    text = "s\(id):shown"
                    let snapshot = (Counter.step, Counter.counts)
                    ranAt.withLock { $0[id] = snapshot }
                case .dropped(.contextReleased): text = "s\(id):released"
                case .dropped(.noUpdaters): text = "s\(id):nothing shown"
                case .dropped(.nothingRequested): text = "s\(id):nothing requested"
                }
                recorded.withLock { $0.append(text) }
            }
        }

        Counter.deliveries = 0
        for _ in 0..<2 { subjects.append(fresh()) }
        // The first renders.
        scheduler.turn()
        modelTurn()

        for step in 0..<steps {
            Counter.step = step
            let subject = subjects.randomElement(using: &random)!
            var released: [Subject] = []
            do {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<35:
                    change(subject, scope: nil)
                case 35..<51:
                    // A scope: an animation or none, a completion, one to three changes, maybe a task.
                    let scope = Scope(id: nextScope, animation: animations.randomElement(using: &random)!)
                    nextScope += 1
                    var transaction = UpdateTransaction(animation: scope.animation)
                    transaction.addCompletion(recordCall(scope.id))
                    log.append("scope s\(scope.id) \(scope.animation.map(Self.label) ?? "-") {")
                    let count = Int.random(in: 0...3, using: &random)
                    let makesTask = Int.random(in: 0..<4, using: &random) == 0
                    let taskTarget = subjects.randomElement(using: &random)!
                    let taskValue = nextValue
                    nextValue += 1
                    // Whether the task ran, and whether its probe was still there to change.
                    let taskRan = NotificationCoalescing.Locked<Bool?>(nil)
                    var taskMade = false
                    // Every scope here carries a completion: entering it flushes, animated or not.
                    modelFlushAll()
                    log.append("(flushed)")
                    withUpdateTransaction(transaction) {
                        for _ in 0..<count {
                            let target = subjects.randomElement(using: &random)!
                            if Int.random(in: 0..<5, using: &random) == 0 {
                                explicitTransaction(on: target, joining: scope)
                            } else if Int.random(in: 0..<4, using: &random) == 0 {
                                let inner = animations.randomElement(using: &random)!
                                log.append("nested \(inner.map(Self.label) ?? "-") {")
                                // Its own transaction decides: an animation flushes; none (and no completion) does not.
                                if inner != nil { modelFlushAll() }
                                withUpdateAnimation(inner) {
                                    change(target, scope: scope, nestedAnimation: .some(inner))
                                }
                                log.append("}")
                            } else {
                                change(target, scope: scope)
                            }
                            settleReleases()
                        }
                        if makesTask, let probe = taskTarget.probe {
                            taskMade = true
                            Task { @MainActor [weak probe] in
                                // Whether it requests is decided before the change (its flush may release it).
                                guard let probe else { return taskRan.withLock { $0 = false } }
                                taskRan.withLock { $0 = true }
                                probe.plain = taskValue
                            }
                        }
                    }
                    log.append("}")
                    // A task created in the scope holds its completion while it runs: the scope closes when the
                    // body has returned and the task has ended.
                    if taskMade {
                        spinMainLoop(timeout: 10) { taskRan.withLock { $0 } != nil }
                    }
                    if taskMade, taskRan.withLock({ $0 }) == true {
                        log.append("task plain=\(taskValue) in s\(scope.id)")
                        let scoped: String?? = .some(scope.animation.map(Self.label))
                        let (effective, transaction) = Self.effective(nil, scoped)
                        modelRequest(taskTarget, flag: effective, transaction: transaction, scope: scope) {
                            taskTarget.values[0] = taskValue
                        }
                        settleReleases()
                    }
                    scope.isOpen = false
                    finishIfDone(scope)
                case 51..<55:
                    // A subscription's element: a request with its transaction through the link (what a
                    // sequence's task does). Its completion runs once per delivery that shows one or more
                    // elements: the early flush its animated request causes (a non-animated update pending)
                    // shows, and completes, the elements before it; this one joins the next run.
                    guard let probe = subject.probe, let subscription = subject.subscription else { break }
                    log.append("\(subject.id).element q\(subscription.id)")
                    let label: String?? = .some(subscription.animation.map(Self.label))
                    modelRequest(
                        subject, flag: subscription.animation != nil, transaction: label, scope: nil,
                        holdsFirst: true
                    ) {}
                    if subject.subscriptionInstance?.spent ?? true {
                        let instance = Scope(
                            id: nextScope, animation: subscription.animation, name: "q\(subscription.id)")
                        nextScope += 1
                        instance.isOpen = false
                        subject.subscriptionInstance = instance
                    }
                    subject.subscriptionInstance!.pending += 1
                    subject.pendingScopes.append(subject.subscriptionInstance!)
                    probe.updateContext.storage.requestFromOutside(
                        subscription.renewable, site: RequestSite(file: #fileID, line: #line))
                case 55..<58:
                    explicitTransaction(on: subject, joining: nil)
                case 58..<80:
                    if Int.random(in: 0..<5, using: &random) == 0 {
                        // A pass in a mode of the app's own: view updates wait for a common pass, parked.
                        log.append("turn private")
                        scheduler.turn(mode: RunLoop.Mode("private"))
                    } else {
                        log.append("turn")
                        modelTurn()
                        scheduler.turn()
                    }
                case 80..<86:
                    let flag: Bool? = [nil, false, true].randomElement(using: &random)!
                    log.append("\(subject.id).update(\(flag.map { $0 ? "T" : "F" } ?? "N"))")
                    let before = subject.rules.deliveries.count
                    subject.rules.update(flag)
                    if subject.rules.deliveries.count > before { modelDelivered(subject, forced: true) }
                    if let probe = subject.probe {
                        probe.updateContext.update(animated: flag)
                    } else {
                        subject.stateProbe!.context.context.update(animated: flag)
                    }
                case 86..<92:
                    log.append("\(subject.id).arm release inside")
                    subject.releaseInside = true
                case 92..<96:
                    log.append("release")
                    released.append(subject)
                    subject.probe = nil
                    subject.stateProbe = nil
                default:
                    // Released on another thread (the last reference goes there).
                    log.append("release on another thread")
                    released.append(subject)
                    let box = ReleaseBox((subject.probe as AnyObject?) ?? subject.stateProbe)
                    subject.probe = nil
                    subject.stateProbe = nil
                    let done = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        box.value = nil
                        done.signal()
                    }
                    _ = box
                    done.wait()
                }
            }
            // Owners released by this step (explicitly, inside a delivery, on another thread) are replaced.
            _ = released
            settleReleases()
            for (index, s) in subjects.enumerated() where s.modelGone { subjects[index] = fresh() }
            // Completions dropped on another thread arrive from the main queue.
            spinMainLoop(timeout: 5) { recorded.withLock { $0.count } >= expectedCalls.count }
            calls = recorded.withLock { $0 }
            if Counter.deliveries != modelCounter {
                XCTFail(
                    "seed \(seed) step \(step): \(Counter.deliveries) deliveries, model \(modelCounter); "
                        + "last steps: \(log.suffix(30)); subjects: "
                        + "\(subjects.map { "\($0.id): \($0.shown) vs \($0.expectedShown)" })")
                return
            }
            for (index, s) in subjects.enumerated() where s.isAlive {
                if s.shown != s.expectedShown {
                    XCTFail(
                        "seed \(seed) step \(step) subject \(index): showed \(s.shown), model \(s.expectedShown); "
                            + "last steps: \(log.suffix(14))")
                    return
                }
                if let probe = s.probe, probe.animations != s.rules.deliveredAnimations {
                    XCTFail(
                        "seed \(seed) step \(step) subject \(index): animations \(probe.animations), model "
                            + "\(s.rules.deliveredAnimations); last steps: \(log.suffix(14))")
                    return
                }
            }
            // In any order: a release inside a step tells its completions when the owner goes, which the
            // model learns at the end of the step. Each exactly once, with the same outcome.
            if calls.sorted() != expectedCalls.sorted() {
                XCTFail(
                    "seed \(seed) step \(step): completions \(calls), model \(expectedCalls); "
                        + "last steps: \(log.suffix(14))")
                return
            }
            // A shown completion ran in the step of its last delivery, after every delivery that absorbed
            // one of its requests (never after the early flush alone).
            let ran = ranAt.withLock { $0 }
            for (id, (expectedStep, after)) in expectedAfter {
                guard let (ranStep, counts) = ran[id] else { continue }
                let early = after.filter { counts[$0.0, default: 0] < $0.1 }
                if ranStep != expectedStep || !early.isEmpty {
                    XCTFail(
                        "seed \(seed) step \(step): s\(id) ran in step \(ranStep) with counts \(counts), model: step "
                            + "\(expectedStep) after \(after); last steps: \(log.suffix(14))")
                    return
                }
            }
        }
        subjects.removeAll()
        spinMainLoop(timeout: 5) { recorded.withLock { $0.count } >= expectedCalls.count }
        _ = try? scheduler.runUntilIdle()
    }

    /// A request's effective flag and transaction label: outside a scope its own flag; inside one, no flag
    /// takes the scope's transaction as it is, `true` its animation or the default one, `false` none.
    static func effective(_ flag: Bool?, _ scoped: String??) -> (Bool?, String??) {
        guard let scoped else { return (flag, nil) }
        switch flag {
        case nil: return (scoped != nil, .some(scoped))
        case true?: return (true, .some(scoped ?? "default"))
        case false?: return (false, .some(nil))
        }
    }
}

/// A reference handed to another thread, which drops it: the test orders the accesses itself.
final class ReleaseBox: @unchecked Sendable {
    // @unchecked Sendable: the test orders every access (a semaphore).
    var value: AnyObject?
    init(_ value: AnyObject?) { self.value = value }
}
