import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import XCTest

/// What a delivery showed: the values `updateView` read, and its flag.
private struct Shown: Equatable, CustomStringConvertible {
    var text: String
    var color: String
    var animated: Bool
    var description: String { "\(text)/\(color)/\(animated ? "a" : "n")" }
}

/// The README's controller, as a plain class: a non-animated and an animated property.
private final class Card: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread, or by another thread in a test step the main
    // thread waits for.
    let updateContext: ViewUpdatingContext
    @NeedsUpdate(animated: false) var text = "a"
    @NeedsUpdate(animated: true) var color = "black"
    @NeedsUpdate var count = 0
    /// State the library cannot see (changed through the closure form, or `willSet`).
    var size = 0
    var shown: [Shown] = []
    var onRender: (() -> Void)?

    init(scheduler: ManualScheduler) {
        updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    }

    func updateView(animated: Bool) {
        shown.append(
            Shown(
                text: "\(text)\(count == 0 ? "" : "#\(count)")\(size == 0 ? "" : "+\(size)")", color: color,
                animated: animated))
        onRender?()
    }
}

/// `@ViewInvalidating(.update(animated: true))` has the same order problem as `@NeedsUpdate`.
private final class Gauge: ViewUpdating {
    let updateContext: ViewUpdatingContext
    @ViewInvalidating(.update(animated: false)) var label = "a"
    @ViewInvalidating(.update(animated: true)) var level = 0
    var shown: [String] = []

    init(scheduler: ManualScheduler) {
        updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    }

    func updateView(animated: Bool) { shown.append("\(label)/\(level)/\(animated ? "a" : "n")") }
}

/// A main-actor object a completion touches: the completion must be `@MainActor` for this to compile
/// under Swift 6 with warnings as errors.
@MainActor
private final class Panel {
    var backgroundColor = "white"
}

/// Completions, by name, with the number of deliveries seen when each ran.
private final class CompletionCalls: @unchecked Sendable {
    // @unchecked Sendable: every access is under `lock`.
    private let lock = NSLock()
    private var calls: [String] = []
    var deliveries: () -> Int = { 0 }

    func record(_ name: String, _ completion: UpdateCompletion) {
        let seen = deliveries()
        lock.lock()
        defer { lock.unlock() }
        switch completion {
        case .shown(let finished): calls.append("\(name):shown\(finished ? "" : "(interrupted)")@\(seen)")
        case .dropped(.contextReleased): calls.append("\(name):released")
        case .dropped(.noUpdaters): calls.append("\(name):nothing shown")
        case .dropped(.nothingRequested): calls.append("\(name):nothing requested")
        }
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return calls
    }

    func transaction(_ name: String, _ animation: UpdateAnimation? = nil) -> UpdateTransaction {
        var transaction = UpdateTransaction(animation: animation)
        transaction.addCompletion { [self] in record(name, $0) }
        return transaction
    }
}

/// The canonical path's headline promise (CONTRACT.md, "The canonical path"): the flush before an
/// animated change shows the state before it; a transaction's completion is called exactly once, on the
/// main thread, however many requests and deliveries its scope made, from whatever task; misuse says what
/// to do. Each case is a timeline on a manual scheduler, checked by what the deliveries *showed*.
final class CanonicalPromiseTests: XCTestCase {
    private var scheduler: ManualScheduler!

    override func setUp() {
        scheduler = ManualScheduler()
    }

    override func tearDown() {
        XCTAssertNoThrow(try scheduler.expectIdle(), "work left pending")
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = true
    }

    /// A connected card, settled: its first render, and the one more a tracked updater's first delivery
    /// earns in that cycle, delivered and forgotten.
    private func card() -> Card {
        let card = Card(scheduler: scheduler)
        onMainActor(card) { $0.startUpdatingView() }
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        card.shown = []
        return card
    }

    // MARK: Flush before the change

    /// `@NeedsUpdate(animated: false)` then `@NeedsUpdate(animated: true)` in one cycle: the flush shows the
    /// old colour, not animated; the end of the cycle animates the new one.
    func testTheFlushBeforeAnAnimatedPropertyShowsTheOldValue() {
        let card = card()
        card.text = "b"
        card.color = "red"
        XCTAssertEqual(card.shown, [Shown(text: "b", color: "black", animated: false)], "the flush, at the set")
        scheduler.turn()
        XCTAssertEqual(
            card.shown,
            [Shown(text: "b", color: "black", animated: false), Shown(text: "b", color: "red", animated: true)])
    }

    /// A plain `@NeedsUpdate` set inside `withUpdateAnimation` after a pending `false`: the spring's value
    /// is drawn by the animated delivery, not by the flush.
    func testAChangeInsideAnAnimatedScopeAfterAPendingFalseAnimates() {
        let card = card()
        card.text = "b"
        withUpdateAnimation(.spring(duration: 0.4, bounce: 0.2)) { card.count = 2 }
        scheduler.turn()
        XCTAssertEqual(
            card.shown.map(\.description), ["b/black/n", "b#2/black/a"], "the flush shows count 0, the spring shows 2")
    }

    /// The same after a completion-only (non-animated) transaction, as the newcomer review's N10 wrote it.
    func testAChangeInsideAnAnimatedScopeAfterANonAnimatedTransactionAnimates() {
        let card = card()
        card.updateContext.setNeedsUpdate(transaction: UpdateTransaction())
        withUpdateAnimation(.spring(duration: 0.4, bounce: 0.2)) { card.count = 2 }
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.description), ["a/black/n", "a#2/black/a"])
    }

    /// For state the library cannot see: the closure form flushes, changes, then requests.
    func testTheClosureFormFlushesBeforeTheChange() {
        let card = card()
        card.text = "b"
        card.setNeedsUpdate(animated: true) { card.size = 5 }
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.description), ["b/black/n", "b+5/black/a"])
        // From another thread the change lands first and the request follows it: shown at the next turn.
        let done = expectation(description: "changed on another thread")
        Thread.detachNewThread {
            card.updateContext.setNeedsUpdate(animated: true) { card.size = 6 }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        scheduler.turn()
        XCTAssertEqual(card.shown.last?.description, "b+6/black/a")
    }

    /// "Request before you change": `willSet` on the main thread keeps the promise too.
    func testARequestInWillSetFlushesBeforeTheChange() {
        final class Slider: ViewUpdating {
            let updateContext: ViewUpdatingContext
            var value = 0 { willSet { setNeedsUpdate(animated: true) } }
            var note = "" { willSet { setNeedsUpdate(animated: false) } }
            var shown: [String] = []
            init(_ scheduler: ManualScheduler) {
                updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            }
            func updateView(animated: Bool) { shown.append("\(note)/\(value)/\(animated ? "a" : "n")") }
        }
        let slider = Slider(scheduler)
        onMainActor(slider) { $0.startUpdatingView() }
        slider.note = "x"
        slider.value = 3
        scheduler.turn()
        XCTAssertEqual(slider.shown, ["/0/n", "x/0/n", "x/3/a"])
    }

    /// `@ViewInvalidating(.update(animated: true))`: the same order as `@NeedsUpdate`.
    func testViewInvalidatingUpdateFlushesBeforeTheChange() {
        let gauge = Gauge(scheduler: scheduler)
        onMainActor(gauge) { $0.startUpdatingView() }
        gauge.label = "b"
        gauge.level = 7
        scheduler.turn()
        XCTAssertEqual(gauge.shown, ["a/0/n", "b/0/n", "b/7/a"])
    }

    /// `StateUpdatingContext.modify` inside `withUpdateAnimation` after a non-animated change: the flush
    /// renders the state before the animated change, whose delivery animates it.
    func testModifyInsideAnAnimatedScopeFlushesTheStateBeforeIt() {
        let context = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var renders: [String] = []
        context.onRender { state, _, animated in renders.append("\(state)\(animated ? "a" : "n")") }
        scheduler.turn()
        context.modify(animated: false) { $0 = 1 }
        withUpdateAnimation { context.modify { $0 = 2 } }
        scheduler.turn()
        XCTAssertEqual(renders, ["0n", "1n", "2a"])
        // A non-animated scope is an explicit `false`: a later animated change flushes it first.
        withUpdateTransaction(UpdateTransaction()) { context.modify { $0 = 3 } }
        context.modify(animated: true) { $0 = 4 }
        scheduler.turn()
        XCTAssertEqual(renders, ["0n", "1n", "2a", "3n", "4a"])
    }

    // MARK: Completions belong to the transaction

    /// One `addCompletion` on one scope whose body makes `nil, false, true, nil` requests: two deliveries
    /// (the flush, then the animated one), one call, after the animated one.
    func testOneCompletionForAScopeWithAnEarlyFlushIsCalledOnceAfterTheLastDelivery() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        withUpdateTransaction(calls.transaction("scope", .easeOut(duration: 0.2))) {
            card.setNeedsUpdate()
            card.setNeedsUpdate(animated: false)
            card.setNeedsUpdate(animated: true)
            card.setNeedsUpdate()
        }
        XCTAssertEqual(card.shown.count, 1, "the early flush")
        XCTAssertEqual(calls.all, [], "not after the flush")
        scheduler.turn()
        XCTAssertEqual(card.shown.count, 2)
        XCTAssertEqual(calls.all, ["scope:shown@2"], "once, after the animated delivery")
        scheduler.turn()
        XCTAssertEqual(calls.all, ["scope:shown@2"])
    }

    /// A scope that delivers at once (`update()`) and then requests again: the completion waits for the
    /// last of its deliveries.
    func testAScopeThatUpdatesAndRequestsAgainCompletesAfterItsLastDelivery() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        withUpdateTransaction(calls.transaction("scope", .default)) {
            card.updateContext.update()
            card.count = 1
        }
        XCTAssertEqual(calls.all, [])
        scheduler.turn()
        XCTAssertEqual(calls.all, ["scope:shown@2"])
    }

    /// One transaction requested on two contexts: one call, after both showed it.
    func testATransactionRequestedOnTwoContextsCompletesOnceAfterBoth() {
        let first = card()
        let second = card()
        let calls = CompletionCalls()
        calls.deliveries = { first.shown.count + second.shown.count }
        let transaction = calls.transaction("both", .default)
        first.updateContext.setNeedsUpdate(transaction: transaction)
        second.updateContext.setNeedsUpdate(transaction: transaction)
        scheduler.turn()
        XCTAssertEqual(calls.all, ["both:shown@2"])
    }

    /// A transaction requested again after its completion ran carries its animation only.
    func testATransactionRequestedAfterItsCompletionRanCarriesTheAnimationOnly() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        let transaction = calls.transaction("t", .linear(duration: 0.1))
        card.updateContext.setNeedsUpdate(transaction: transaction)
        scheduler.turn()
        card.updateContext.setNeedsUpdate(transaction: transaction)
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.animated), [true, true])
        XCTAssertEqual(calls.all, ["t:shown@1"], "never twice")
    }

    /// A scope that requests nothing: its completion is told, once, that nothing was shown.
    func testAScopeThatRequestsNothingIsToldSoOnce() {
        let calls = CompletionCalls()
        withUpdateTransaction(calls.transaction("empty", .default)) {}
        XCTAssertEqual(calls.all, ["empty:nothing requested"])
    }

    /// A nested scope: its animation wins, and the enclosing scope's completion waits for its requests too.
    func testANestedScopeKeepsTheEnclosingScopesCompletion() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        withUpdateTransaction(calls.transaction("outer", .linear(duration: 0.1))) {
            withUpdateAnimation(nil) { card.count = 1 }  // explicitly not animated, inside
        }
        XCTAssertEqual(calls.all, [], "the outer completion waits for the nested request")
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.description), ["a#1/black/n"], "the innermost animation (none) wins")
        XCTAssertEqual(calls.all, ["outer:shown@1"])
    }

    /// The closure form requests even when its changes throw: what they changed before throwing is shown.
    func testTheClosureFormRequestsWhenTheChangesThrow() {
        struct Failure: Error {}
        let card = card()
        XCTAssertThrowsError(
            try card.setNeedsUpdate(animated: true) {
                card.size = 9
                throw Failure()
            })
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.description), ["a+9/black/a"])
    }

    /// Typed `@MainActor @Sendable`: UIKit-style code in a completion compiles under Swift 6 (this file is
    /// built with warnings as errors), and runs on the main thread.
    @MainActor
    func testACompletionIsMainActorIsolated() {
        let panel = Panel()
        let card = card()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { _ in panel.backgroundColor = "red" }
        card.updateContext.setNeedsUpdate(transaction: transaction)
        scheduler.turn()
        XCTAssertEqual(panel.backgroundColor, "red")
    }

    /// `animateWithFlushedUpdates(transaction:)` after a pending non-animated change: the flush shows the
    /// earlier change, not animated, and the transaction's completion is told "shown" after the animated
    /// delivery of its own changes — not by the earlier flush.
    func testAnimateWithFlushedUpdatesCompletesAfterItsOwnAnimatedDelivery() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        card.text = "b"  // pending, not animated
        card.updateContext.animateWithFlushedUpdates(transaction: calls.transaction("flushed", .default)) {
            card.size = 3
            card.updateContext.setNeedsUpdate()
        }
        XCTAssertEqual(card.shown.map(\.description), ["b/black/n", "b+3/black/a"])
        XCTAssertEqual(calls.all, ["flushed:shown@2"])
        scheduler.turn()  // the turn the earlier request asked for finds nothing left
        XCTAssertEqual(card.shown.count, 2)
    }

    /// The same from inside an updater: the earlier requests and the animated ones wait for the next cycle,
    /// and the completion still waits for the delivery that animates its changes.
    func testAnimateWithFlushedUpdatesFromInsideAnUpdaterCompletesAfterItsAnimatedDelivery() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        var armed = true
        card.onRender = {
            guard armed else { return }
            armed = false
            card.text = "c"  // a non-animated change requested inside the updater
            card.updateContext.animateWithFlushedUpdates(transaction: calls.transaction("inside", .default)) {
                card.size = 4
                card.updateContext.setNeedsUpdate()
            }
        }
        card.count = 1
        scheduler.turn()  // the delivery whose updater calls it
        XCTAssertEqual(calls.all, [])
        _ = try? scheduler.runUntilIdle()
        let shown = card.shown.map(\.description)
        XCTAssertEqual(shown.last, "c#1+4/black/a", "\(shown)")
        XCTAssertEqual(calls.all, ["inside:shown@\(shown.count)"], "after the animated delivery, once")
    }

    // MARK: Tasks carry the scope

    /// A `Task` created inside `withUpdateAnimation` runs after the scope closed: its request still carries
    /// the animation, and joins the scope's completion (still pending: the body's request waits too).
    func testATaskCreatedInAScopeCarriesItsTransactionAndJoinsItsCompletion() {
        let card = card()
        let other = self.card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count + other.shown.count }
        let ran = expectation(description: "the task ran")
        withUpdateTransaction(calls.transaction("scope", .linear(duration: 0.3))) {
            card.count = 1
            Task { @MainActor in
                other.size = 2
                other.updateContext.setNeedsUpdate()
                ran.fulfill()
            }
        }
        wait(for: [ran], timeout: 10)
        XCTAssertEqual(calls.all, [], "the body's request is still pending")
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.description), ["a#1/black/a"])
        XCTAssertEqual(other.shown.map(\.description), ["a+2/black/a"], "the task's request carries the animation")
        XCTAssertEqual(calls.all, ["scope:shown@2"], "once, after both deliveries")
    }

    /// A task created in a scope whose body requested nothing holds the scope's completion while it runs:
    /// its request carries the animation and the completion, which is told once, "shown", after the delivery
    /// that showed it (0.2.0 told it "nothing shown" as the body returned; CONTRACT.md, 0.3.0).
    func testATaskCreatedInAScopeWhoseBodyRequestedNothingHoldsTheCompletion() {
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        let ran = expectation(description: "the task ran")
        withUpdateTransaction(calls.transaction("scope", .linear(duration: 0.3))) {
            Task { @MainActor in
                card.count = 3
                ran.fulfill()
            }
        }
        wait(for: [ran], timeout: 10)
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.description), ["a#3/black/a"], "animated by the scope's transaction")
        XCTAssertEqual(calls.all, ["scope:shown@1"])
    }

    /// A task that requests nothing releases the completion when it ends: "nothing requested", once.
    func testATaskThatRequestsNothingToldTheCompletionNothingShownWhenItEnds() {
        let calls = CompletionCalls()
        let ran = expectation(description: "the task ran")
        let proceed = DispatchSemaphore(value: 0)
        withUpdateTransaction(calls.transaction("scope", .default)) {
            Task.detached {}  // carries nothing: detached
            Task {
                // Waits off the task's thread: a semaphore's wait() is unavailable in async code on Apple SDKs.
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        proceed.wait()
                        continuation.resume()
                    }
                }
                ran.fulfill()
            }
        }
        XCTAssertEqual(calls.all, [], "the task holds it")
        proceed.signal()
        wait(for: [ran], timeout: 10)
        spinMainLoop(timeout: 5) { !calls.all.isEmpty }
        XCTAssertEqual(calls.all, ["scope:nothing requested"])
    }

    /// A task on another thread (not main-actor isolated) created in a scope: its request waits in the
    /// inbox with the transaction, and joins the completion while it is pending.
    func testATaskOnAnotherThreadJoinsTheCompletionWhileItIsPending() {
        let card = card()
        let other = self.card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count + other.shown.count }
        let ran = expectation(description: "the task ran")
        withUpdateTransaction(calls.transaction("scope", .default)) {
            card.count = 1
            Task {  // the global executor: another thread
                other.updateContext.setNeedsUpdate()
                ran.fulfill()
            }
        }
        wait(for: [ran], timeout: 10)
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.animated), [true])
        XCTAssertEqual(other.shown.map(\.animated), [true])
        // The task lets go of the scope when it ends, just after `ran`: the completion is told then (from the
        // main queue when that is after the delivery), once.
        spinMainLoop(timeout: 10) { !calls.all.isEmpty }
        XCTAssertEqual(calls.all, ["scope:shown@2"])
    }

    // MARK: Never lost

    /// Released by an updater of the early flush: the animated request that caused the flush is told it
    /// was dropped, once. The request comes through the context's link (what Observation's `onChange`,
    /// async sequences and Combine use), which holds the context's storage, not the context: the owner's
    /// last reference goes inside the flush.
    func testAReleaseInsideTheEarlyFlushDropsTheAnimatedRequestOnce() {
        var card: Card? = self.card()
        let calls = CompletionCalls()
        card!.text = "b"
        let link = card!.updateContext.storage
        weak let gone: Card? = card
        card!.onRender = { card = nil }
        link.requestFromOutside(calls.transaction("animated", .default), site: RequestSite(file: #fileID, line: #line))
        XCTAssertNil(gone, "released by its flush's updater")
        spinMainLoop(timeout: 5) { !calls.all.isEmpty }
        XCTAssertEqual(calls.all, ["animated:released"])
        scheduler.turn()  // the scheduler forgets the released context
    }

    /// A release on another thread racing the main thread's apply of transactions from the inbox: every
    /// completion is called exactly once (shown or dropped), in every round.
    func testReleasesRacingTheMainThreadNeverLoseACompletion() {
        let rounds = 300
        let calls = CompletionCalls()
        for round in 0..<rounds {
            let holder = ContextHolder(ViewUpdatingContext(scheduler: scheduler, refreshEvents: []))
            holder.context!.onUpdate { _ in }
            let posted = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                holder.context?.setNeedsUpdate(transaction: calls.transaction("r\(round)a", .default))
                holder.context?.setNeedsUpdate(animated: false)
                holder.context?.setNeedsUpdate(transaction: calls.transaction("r\(round)b"))
                posted.signal()
                release.wait()
                holder.context = nil  // released here, while the main thread applies the inbox
            }
            posted.wait()
            release.signal()
            scheduler.turn()
            _ = try? scheduler.runUntilIdle()
        }
        spinMainLoop(timeout: 20) { calls.all.count >= rounds * 2 }
        let all = calls.all
        XCTAssertEqual(all.count, rounds * 2, "every completion called")
        XCTAssertEqual(Set(all.map { $0.prefix { $0 != ":" } }).count, rounds * 2, "each exactly once")
    }

    // MARK: Release-build recoveries keep the transaction

    /// `update(transaction:)` off the main thread, in a release build (with `stopsAtMisuseInDebugBuilds` off, debug builds take
    /// that path too): reported, then one forced delivery in the next cycle, with the transaction.
    func testUpdateWithATransactionOffTheMainThreadBecomesOneUpdateWithIt() {
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = false
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        let done = expectation(description: "called")
        Thread.detachNewThread {
            card.updateContext.update(transaction: calls.transaction("u", .spring(duration: 0.3)))
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.animated), [true], "one delivery, animated by the transaction")
        XCTAssertEqual(calls.all, ["u:shown@1"])
    }

    /// `update()` off the main thread inside a scope: it keeps the scope's transaction and its completion.
    func testUpdateOffTheMainThreadInsideAScopeKeepsTheScopesTransaction() {
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = false
        let card = card()
        let calls = CompletionCalls()
        calls.deliveries = { card.shown.count }
        let done = expectation(description: "called")
        Thread.detachNewThread {
            withUpdateTransaction(calls.transaction("scope", .easeIn(duration: 0.2))) {
                card.updateContext.update()
            }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        scheduler.turn()
        XCTAssertEqual(card.shown.map(\.animated), [true])
        spinMainLoop(timeout: 5) { !calls.all.isEmpty }
        XCTAssertEqual(calls.all, ["scope:shown@1"])
    }
}

/// A context that another thread releases.
private final class ContextHolder: @unchecked Sendable {
    // @unchecked Sendable: set on one thread while the other only reads it through the optional chain in
    // the same test step, ordered by semaphores.
    var context: ViewUpdatingContext?
    init(_ context: ViewUpdatingContext) { self.context = context }
}
