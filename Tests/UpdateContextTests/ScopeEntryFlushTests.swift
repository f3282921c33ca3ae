import CoalescingTestSupport
import Foundation
import Observation
import UpdateContext
import XCTest

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class ChildModel: @unchecked Sendable {
    // @unchecked Sendable: written by one thread at a time (the main thread, or a producer the test joins).
    var value = 0
}

/// A child screen: a tracked model, a plain `@NeedsUpdate` property a parent pushes, and what it showed.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class ChildScreen: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread, or by a producer thread through the context only.
    let updateContext: ViewUpdatingContext
    let model = ChildModel()
    @NeedsUpdate var pushed = 0
    var shown: [String] = []
    /// What its render does besides showing (push into its parent).
    var render: (() -> Void)?

    init(scheduler: ManualScheduler) {
        updateContext = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
    }

    func updateView(animated: Bool) {
        shown.append("\(model.value)/\(pushed) \(animated ? "a" : "n")")
        render?()
    }
}

/// A parent screen whose render pushes state into its child.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class ParentScreen: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread only.
    let updateContext: ViewUpdatingContext
    @NeedsUpdate var title = ""
    var shown: [String] = []
    var render: (() -> Void)?

    init(scheduler: ManualScheduler) {
        updateContext = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
    }

    func updateView(animated: Bool) {
        shown.append("\(title) \(animated ? "a" : "n")")
        render?()
    }
}

/// An animating (or completing) scope first delivers what is pending on its thread, and also, in rounds, what
/// those deliveries made pending — a parent's render pushing into a child — each context at most once per flush:
/// the scope's change to the child then animates alone, and its completion waits for it.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ScopeEntryFlushTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var parent: ParentScreen!
    private var child: ChildScreen!

    override func setUp() {
        scheduler = ManualScheduler()
        parent = ParentScreen(scheduler: scheduler)
        child = ChildScreen(scheduler: scheduler)
        onMainActor(parent) { $0.startUpdatingView() }
        onMainActor(child) { $0.startUpdatingView() }
        XCTAssertEqual(try scheduler.runUntilIdle(), 0)
        parent.shown.removeAll()
        child.shown.removeAll()
    }

    /// The parent's render changes an `@Observable` value the tracked child read: the flush's second round
    /// delivers the child, whose new tracking hears the scope's change: it animates, and the completion is
    /// told it was shown (before, the child stayed pending, its spent tracking missed the scope's change: shown
    /// unanimated, and the completion told `.nothingRequested`).
    func testAParentsRenderPushingIntoATrackedChildLetsTheScopesChangeAnimate() {
        let child = UncheckedBox(child!)
        parent.render = { child.value.model.value = 1 }
        parent.title = "t"
        let told = SharedLog()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { told.append("\($0)") }
        withUpdateTransaction(transaction) { child.value.model.value = 2 }
        XCTAssertEqual(parent.shown, ["t n"])
        XCTAssertEqual(child.value.shown, ["1/0 n"], "the push, shown by the flush, not animated")
        scheduler.turn()
        XCTAssertEqual(child.value.shown, ["1/0 n", "2/0 a"], "the scope's change, alone and animated")
        XCTAssertEqual(told.entries, ["shown(finished: true)"])
        XCTAssertTrue(scheduler.isIdle)
    }

    /// The parent's render sets a plain `@NeedsUpdate` property of the child: the flush delivers it unanimated,
    /// so the scope's change to the child animates alone (before, the pushed change animated with it).
    func testAParentsRenderPushingIntoAPlainChildIsNotAnimatedByTheScope() {
        let child = UncheckedBox(child!)
        parent.render = { child.value.pushed = 1 }
        parent.title = "t"
        withUpdateAnimation { child.value.pushed = 2 }
        XCTAssertEqual(child.value.shown, ["0/1 n"])
        scheduler.turn()
        XCTAssertEqual(child.value.shown, ["0/1 n", "0/2 a"])
        XCTAssertTrue(scheduler.isIdle)
    }

    /// A child whose context has another scheduler of the same thread, with nothing waiting there when the scope
    /// begins (a parent on the main run loop, a child bound to UIKit's update-properties pass): the parent's push
    /// lists it there, and the flush's next round delivers it too.
    func testAChildOnAnotherSchedulerIdleAtTheScopesEntryIsFlushedToo() {
        let otherScheduler = ManualScheduler()
        let child = UncheckedBox(ChildScreen(scheduler: otherScheduler))
        onMainActor(child.value) { $0.startUpdatingView() }
        XCTAssertEqual(try otherScheduler.runUntilIdle(), 0)
        child.value.shown.removeAll()
        parent.render = { child.value.pushed = 1 }
        parent.title = "t"
        withUpdateAnimation { child.value.pushed = 2 }
        XCTAssertEqual(child.value.shown, ["0/1 n"], "the push, flushed before the scope's change")
        scheduler.turn()
        otherScheduler.turn()
        XCTAssertEqual(child.value.shown, ["0/1 n", "0/2 a"])
        XCTAssertTrue(scheduler.isIdle && otherScheduler.isIdle)
    }

    /// A parent and a child that push into each other: each is delivered at most once by the flush (the parent's
    /// second change waits for the turn), the flush ends, and the turn shows the last state.
    func testAParentAndChildThatPushIntoEachOtherAreFlushedOnceEach() {
        let child = UncheckedBox(child!)
        let parent = UncheckedBox(parent!)
        parent.value.render = { child.value.pushed += 1 }
        child.value.render = { parent.value.title = "from child \(child.value.pushed)" }
        parent.value.title = "t"
        withUpdateAnimation { child.value.model.value = 5 }
        XCTAssertEqual(parent.value.shown, ["t n"], "flushed once; what the child pushed back waits")
        XCTAssertEqual(child.value.shown, ["0/1 n"])
        scheduler.turn()
        XCTAssertEqual(parent.value.shown.last, "from child 1 n")
        XCTAssertEqual(child.value.shown.last, "5/2 a", "the scope's change animates (with the parent's next push)")
        _ = try? scheduler.runUntilIdle(maxTurns: 20)  // they push each other every cycle: bounded here
        parent.value.render = nil
        child.value.render = nil
        XCTAssertNoThrow(try scheduler.runUntilIdle())
    }

    /// What another thread requests of the child after the scope's entry waits for the turn (the flush's later
    /// rounds do not apply the inbox): its completion is told after the turn, not by the flush; the parent's push
    /// is still flushed, and the turn shows everything.
    func testAnotherThreadsRequestAfterTheScopesEntryWaitsForTheTurn() {
        let child = UncheckedBox(child!)
        let told = SharedLog()
        parent.render = { [unowned parent = parent!] in
            guard parent.shown.count == 1 else { return }  // its first render only
            child.value.pushed = 1
            onAnotherThread {
                var transaction = UpdateTransaction()
                transaction.addCompletion { told.append("\($0)") }
                child.value.updateContext.setNeedsUpdate(transaction: transaction)
            }
        }
        parent.title = "t"
        let parent = UncheckedBox(parent!)
        withUpdateAnimation { parent.value.title = "u" }
        XCTAssertEqual(child.value.shown, ["0/1 n"], "the push, flushed")
        XCTAssertEqual(told.entries, [], "the other thread's request waits for the turn")
        scheduler.turn()
        XCTAssertEqual(parent.value.shown, ["t n", "u a"])
        XCTAssertEqual(child.value.shown, ["0/1 n", "0/1 n"], "the other thread's request, delivered by the turn")
        XCTAssertEqual(told.entries, ["shown(finished: true)"])
        XCTAssertTrue(scheduler.isIdle)
    }

    /// A background producer requesting the child all along while the main thread enters scopes after a parent's
    /// change: every flush ends, every completion is told once, and the child ends showing the model.
    func testABackgroundProducerNeitherHangsTheFlushNorLosesAnUpdate() {
        let child = UncheckedBox(child!)
        parent.render = { child.value.pushed &+= 1 }
        let stop = AtomicCounter()
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while stop.value == 0 { child.value.updateContext.setNeedsUpdate() }
            stopped.signal()
        }
        let told = SharedLog()
        for round in 1...200 {
            parent.title = "t\(round)"
            var transaction = UpdateTransaction(animation: .default)
            transaction.addCompletion { told.append("\(round) \($0.wasShown)") }
            withUpdateTransaction(transaction) { child.value.model.value = round }
            scheduler.turn()
        }
        stop.store(1)
        stopped.wait()
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(told.entries.count, 200, "each completion told once")
        XCTAssertEqual(Set(told.entries).count, 200)
        XCTAssertEqual(child.value.shown.last?.hasPrefix("200/"), true, "\(child.value.shown.suffix(3))")
        XCTAssertEqual(parent.shown.last, "t200 n")
    }
}

/// Random screens whose renders push into one another (an `@Observable` value the other's tracked render reads,
/// or its `@NeedsUpdate` property), random changes, turns and scopes entered with a change to one screen: when
/// the scope's body runs, a screen is still pending only if the flush delivered it and a later delivery of the
/// same flush pushed into it again (what becomes pending again waits for the turn); then a tracked change the
/// body makes to a clean screen animates and its completion is told it was shown. Every flush ends.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ScopeEntryFlushRandomTests: XCTestCase {
    private final class Screen: ViewUpdating, @unchecked Sendable {
        // @unchecked Sendable: the main thread only.
        let updateContext: ViewUpdatingContext
        let model = ChildModel()
        @NeedsUpdate var pushed = 0
        /// Screens this one's render pushes into: through their model (`true`) or their property.
        var pushes: [(Screen, viaModel: Bool)] = []
        var shown: [String] = []
        /// While a scope's entry flushes: the flush deliveries, in order, and the pushes made after each.
        var log: ((String) -> Void)?
        let name: String
        /// Numbers every push (main thread only).
        nonisolated(unsafe) static var pushes = 0

        init(name: String, scheduler: ManualScheduler) {
            self.name = name
            updateContext = ViewUpdatingContext(label: name, scheduler: scheduler, refreshEvents: [])
        }

        func updateView(animated: Bool) {
            shown.append("\(model.value)/\(pushed) \(animated ? "a" : "n")")
            log?("delivered \(name)")
            // A push writes without reading (a read would make it this render's own write-back, a request of its
            // own that waits for the turn).
            for (screen, viaModel) in pushes {
                Self.pushes &+= 1
                if viaModel { screen.model.value = Self.pushes } else { screen.pushed = Self.pushes }
                log?("pushed \(screen.name)")
            }
        }
    }

    func testScopesFlushWhatTheirOwnDeliveriesMadePending() {
        for seed in randomSeeds(fixed: [1, 2, 3, 7, 11]) { run(seed: seed, steps: 150) }
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        // Two schedulers of the main thread (the main run loop's and UIKit's update-properties pass, say): a push
        // may list a screen on one that had nothing waiting when the scope began.
        let schedulers = [ManualScheduler(), ManualScheduler()]
        let screens = (0..<4).map {
            Screen(name: "s\($0)", scheduler: schedulers[Int.random(in: 0..<2, using: &random)])
        }
        func turn() { for scheduler in schedulers.shuffled(using: &random) { scheduler.turn() } }
        for screen in screens {
            for other in screens where other !== screen && Int.random(in: 0..<3, using: &random) == 0 {
                screen.pushes.append((other, Bool.random(using: &random)))
            }
            onMainActor(screen) { $0.startUpdatingView() }
        }
        for scheduler in schedulers { _ = try? scheduler.runUntilIdle(maxTurns: 10) }
        let told = SharedLog()
        var history: [String] = []
        for step in 0..<steps {
            let target = screens[Int.random(in: 0..<screens.count, using: &random)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                Screen.pushes &+= 1
                target.pushed = Screen.pushes
                history.append("change \(target.name)")
            case 3..<5:
                turn()
                history.append("turn")
            default:
                var log: [String] = []
                for screen in screens { screen.log = { log.append($0) } }
                var transaction = UpdateTransaction(animation: .default)
                transaction.addCompletion { told.append("\(step) \($0)") }
                var pendingAtBody: [String] = []
                let before = target.shown.count
                withUpdateTransaction(transaction) {
                    pendingAtBody = screens.filter { $0.updateContext.isUpdatePending }.map(\.name)
                    Screen.pushes &+= 1
                    target.model.value = Screen.pushes
                }
                for screen in screens { screen.log = nil }
                history.append("scope on \(target.name): \(log)")
                // Still pending when the body ran: only a screen the flush delivered and then pushed into again.
                for name in pendingAtBody {
                    guard let delivered = log.firstIndex(of: "delivered \(name)"),
                        log[delivered...].contains("pushed \(name)")
                    else {
                        return XCTFail(
                            "seed \(seed) step \(step): \(name) pending when the body ran; \(history.suffix(6))")
                    }
                }
                turn()
                // A clean target's change was heard in the scope: it animates, and the completion says shown.
                if !pendingAtBody.contains(target.name) {
                    XCTAssertEqual(
                        target.shown[before...].last?.hasSuffix(" a"), true,
                        "seed \(seed) step \(step): \(target.shown[before...]); \(history.suffix(6))")
                    XCTAssertEqual(
                        told.entries.last, "\(step) shown(finished: true)",
                        "seed \(seed) step \(step): \(history.suffix(6))")
                }
            }
        }
        for screen in screens { screen.pushes = [] }
        for _ in 0..<50 where !schedulers.allSatisfy(\.isIdle) { turn() }
        XCTAssertTrue(schedulers.allSatisfy(\.isIdle), "seed \(seed)")
    }
}
