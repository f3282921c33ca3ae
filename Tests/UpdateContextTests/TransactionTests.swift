import Foundation
import NotificationCoalescing
import Observation
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

private enum Marker: UpdateTransactionKey {
    static let defaultValue = 0
}

private enum Label: UpdateTransactionKey {
    static let defaultValue = ""
}

/// Completions, counted per label, from any thread.
private final class CompletionLog: @unchecked Sendable {
    // @unchecked Sendable: every access is under `lock`.
    private let lock = NSLock()
    private var entries: [String] = []

    func record(_ label: String, _ completion: UpdateCompletion) {
        let text: String
        switch completion {
        case .shown(let finished): text = finished ? "shown" : "interrupted"
        case .dropped(.contextReleased): text = "released"
        case .dropped(.noUpdaters): text = "no updaters"
        case .dropped(.nothingRequested): text = "nothing requested"
        }
        lock.lock()
        entries.append("\(label):\(text)")
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }

    func transaction(_ label: String, _ animation: UpdateAnimation? = nil) -> UpdateTransaction {
        var transaction = UpdateTransaction(animation: animation)
        transaction.addCompletion { [self] in record(label, $0) }
        return transaction
    }
}

final class TransactionTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    /// What each delivery's transaction was: its animation's description, or `n`.
    private var deliveries: [String] = []
    private var log: CompletionLog!

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        deliveries = []
        log = CompletionLog()
        context.onUpdateWithTransaction { [unowned self] transaction in
            deliveries.append(transaction.animation.map { "\($0)" } ?? "n")
        }
    }

    private func t(_ animation: UpdateAnimation?) -> UpdateTransaction { UpdateTransaction(animation: animation) }

    // MARK: Merging: the precedence table read with "has an animation"

    /// Each row: requests (a closure), then what was delivered before the end of the cycle, and after.
    /// The animated-flag table's scope row (README, "The animated-flag rules"): `N`, then
    /// `withUpdateAnimation { N }`, then the end of the cycle — `n` at the scope's entry, then `| a`.
    func testTheFlagTablesScopeRow() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var flags: [String] = []
        context.onUpdate { flags.append($0 ? "a" : "n") }
        context.setNeedsUpdate()
        withUpdateAnimation { context.setNeedsUpdate() }
        XCTAssertEqual(flags, ["n"], "the pending N, delivered at the scope's entry")
        scheduler.turn()
        XCTAssertEqual(flags, ["n", "a"])
        XCTAssertFalse(context.isUpdatePending)
    }

    func testMergeRows() {
        let spring = UpdateAnimation.spring(duration: 0.4, bounce: 0.2)
        let linear = UpdateAnimation.linear(duration: 0.2)
        let rows: [(String, (ViewUpdatingContext) -> Void, [String], [String], Bool)] = [
            (
                "t(spring) t(linear) |",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: linear))
                }, [], ["\(linear)"], false
            ),
            (
                "N t(spring) |",
                {
                    $0.setNeedsUpdate()
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, [], ["\(spring)"], false
            ),
            (
                "t() t(spring) |: flush",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction())
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, ["n"], ["\(spring)"], false
            ),
            (
                "t(spring) t() |",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    $0.setNeedsUpdate(transaction: UpdateTransaction())
                }, [], ["n"], false
            ),
            (
                "t(spring) T |: the last animated request is the default's",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    $0.setNeedsUpdate(animated: true)
                }, [], ["\(UpdateAnimation.default)"], false
            ),
            (
                "T t(spring) |",
                {
                    $0.setNeedsUpdate(animated: true)
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, [], ["\(spring)"], false
            ),
            (
                "F t(spring) |: flush",
                {
                    $0.setNeedsUpdate(animated: false)
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, ["n"], ["\(spring)"], false
            ),
            (
                "t() T |: flush",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction())
                    $0.setNeedsUpdate(animated: true)
                }, ["n"], ["\(UpdateAnimation.default)"], false
            ),
            (
                "t(spring) t(spring) T t(spring) |: a repeat takes the fast path, a reset does not stick",
                { c in
                    for _ in 0..<3 { c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring)) }
                    c.setNeedsUpdate(animated: true)
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, [], ["\(spring)"], false
            ),
            (
                "t(spring) t(linear) t(spring) |",
                { c in
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: linear))
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, [], ["\(spring)"], false
            ),
            (
                "t(spring) t(linear, value) t(spring) |: a transaction with more than an animation moves the pending one",
                { c in
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    var marked = UpdateTransaction(animation: linear)
                    marked[Marker.self] = 1
                    c.setNeedsUpdate(transaction: marked)
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, [], ["\(spring)"], false
            ),
            (
                "t(spring) | t(spring) |: the cache does not outlive the delivery",
                { c in
                    c.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                }, [], ["\(spring)"], false
            ),
            ("N | with the default animated", { $0.setNeedsUpdate() }, [], ["\(UpdateAnimation.default)"], true),
            (
                "t() | with the default animated", { $0.setNeedsUpdate(transaction: UpdateTransaction()) }, [], ["n"],
                true
            ),
            (
                "N U(t(spring))",
                {
                    $0.setNeedsUpdate()
                    $0.update(transaction: UpdateTransaction(animation: spring))
                }, ["\(spring)"], [], false
            ),
            (
                "t(spring) U",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    $0.update()
                }, ["\(spring)"], [], false
            ),
            (
                "t(spring) U(F)",
                {
                    $0.setNeedsUpdate(transaction: UpdateTransaction(animation: spring))
                    $0.update(animated: false)
                }, ["n"], [], false
            ),
        ]
        for (name, requests, now, atEnd, animatedByDefault) in rows {
            context.animatesByDefault = animatedByDefault
            deliveries = []
            requests(context)
            XCTAssertEqual(deliveries, now, "\(name): before the end of the cycle")
            deliveries = []
            scheduler.turn()
            XCTAssertEqual(deliveries, atEnd, "\(name): at the end of the cycle")
        }
    }

    func testCustomValuesMergeKeyByKeyLastWins() {
        var seen: [(Int, String)] = []
        context.onUpdateWithTransaction { seen.append(($0[Marker.self], $0[Label.self])) }
        var first = UpdateTransaction(animation: .default)
        first[Marker.self] = 1
        first[Label.self] = "first"
        var second = UpdateTransaction(animation: .default)
        second[Marker.self] = 2
        context.setNeedsUpdate(transaction: first)
        context.setNeedsUpdate(transaction: second)
        scheduler.turn()
        XCTAssertEqual(seen.map(\.0), [2])
        XCTAssertEqual(seen.map(\.1), ["first"], "a key the later transaction did not set keeps its value")
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(seen.last?.0, 0, "each delivery starts from the defaults")
    }

    // MARK: Completions: exactly once, on every path

    func testCompletionsOfADeliveryRunOnceAfterItsUpdaters() {
        var order: [String] = []
        context.onUpdate { _ in order.append("updater") }
        var transaction = log.transaction("a", .default)
        transaction.addCompletion { _ in }
        context.setNeedsUpdate(transaction: transaction)
        context.setNeedsUpdate(transaction: log.transaction("b"))  // not animated: `| n`, both absorbed
        XCTAssertEqual(log.all, [])
        scheduler.turn()
        XCTAssertEqual(order, ["updater"])
        XCTAssertEqual(log.all, ["a:shown", "b:shown"])
        scheduler.turn()
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(log.all, ["a:shown", "b:shown"], "never twice")
    }

    func testTheEarlyFlushCompletesTheRequestsBeforeIt() {
        context.setNeedsUpdate(transaction: log.transaction("before"))
        context.setNeedsUpdate(transaction: log.transaction("after", .default))
        XCTAssertEqual(log.all, ["before:shown"], "the flush showed the earlier request")
        scheduler.turn()
        XCTAssertEqual(log.all, ["before:shown", "after:shown"])
    }

    func testUpdateCompletesAtOnce() {
        context.setNeedsUpdate(transaction: log.transaction("pending"))
        context.update(transaction: log.transaction("now", .default))
        XCTAssertEqual(log.all, ["pending:shown", "now:shown"])
        XCTAssertEqual(deliveries, ["\(UpdateAnimation.default)"])
    }

    func testSuspendedThenResumed() {
        context.suspend()
        context.setNeedsUpdate(transaction: log.transaction("kept", .default))
        context.update(transaction: log.transaction("kept update"))
        scheduler.turn()
        XCTAssertEqual(log.all, [], "nothing is shown while suspended")
        context.resume()
        XCTAssertEqual(log.all, ["kept:shown", "kept update:shown"])
        XCTAssertEqual(deliveries, ["n"])
    }

    func testDroppedWhenTheContextIsReleasedOrNobodyShowsIt() {
        let released = expectation(description: "released")
        var transaction = log.transaction("released")
        transaction.addCompletion { _ in released.fulfill() }
        context.setNeedsUpdate(transaction: transaction)
        context = nil
        XCTAssertEqual(log.all, ["released:released"], "released on its scheduler's thread: told at once")
        wait(for: [released], timeout: 5)
        XCTAssertEqual(log.all, ["released:released"])

        let lonely = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        lonely.setNeedsUpdate(transaction: log.transaction("nobody"))
        scheduler.turn()
        XCTAssertEqual(log.all, ["released:released", "nobody:no updaters"])
    }

    func testFromOtherThreadsEveryCompletionOnce() {
        let context = context!
        let log = log!
        let threads = 4
        let perThread = 250
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                var transaction = UpdateTransaction(animation: index % 2 == 0 ? .default : nil)
                transaction.addCompletion { log.record("\(thread).\(index)", $0) }
                context.setNeedsUpdate(transaction: transaction)
            }
        }
        _ = try? scheduler.runUntilIdle()
        XCTAssertEqual(log.all.count, threads * perThread, "every completion, once")
        XCTAssertEqual(Set(log.all).count, threads * perThread)
        XCTAssertTrue(log.all.allSatisfy { $0.hasSuffix(":shown") })
    }

    func testRequestedInsideAnUpdaterIsShownInALaterCycle() {
        var once = true
        context.onUpdate { [unowned self] _ in
            if once {
                once = false
                context.setNeedsUpdate(transaction: log.transaction("inside", .default))
            }
        }
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(log.all, [], "not re-entrantly")
        scheduler.turn()
        XCTAssertEqual(log.all, ["inside:shown"])
        XCTAssertEqual(deliveries, ["n", "\(UpdateAnimation.default)"])
    }

    func testACompletionThatRequestsGetsALaterCycle() {
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { [context] _ in context!.setNeedsUpdate() }
        context.setNeedsUpdate(transaction: transaction)
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 2, "the completion's request, one cycle later")
    }

    /// `animate` runs the changes (at once where there is no view animation) and the completions wait for
    /// it.
    func testAnimateRunsTheChangesAndTheCompletionsAfterIt() {
        var order: [String] = []
        context.onUpdateWithTransaction { transaction in
            transaction.animate { order.append("changes") }
            order.append("after animate")
        }
        var transaction = UpdateTransaction(animation: .easeInOut(duration: 0.2))
        transaction.addCompletion { [log] in log!.record("animated", $0) }
        context.setNeedsUpdate(transaction: transaction)
        scheduler.turn()
        XCTAssertEqual(order, ["changes", "after animate"])
        XCTAssertEqual(log.all, ["animated:shown"])
    }

    // MARK: The current transaction

    func testWithUpdateTransactionIsCurrentInsideNestedAndNotOnOtherThreads() {
        XCTAssertNil(UpdateTransaction.current)
        withUpdateAnimation(.linear(duration: 1)) {
            XCTAssertEqual(UpdateTransaction.current?.animation, .linear(duration: 1))
            withUpdateAnimation(.easeIn(duration: 2)) {
                XCTAssertEqual(UpdateTransaction.current?.animation, .easeIn(duration: 2), "the innermost")
            }
            XCTAssertEqual(UpdateTransaction.current?.animation, .linear(duration: 1))
            let seenElsewhere = expectation(description: "other thread")
            Thread {
                XCTAssertNil(UpdateTransaction.current, "another thread does not inherit it")
                seenElsewhere.fulfill()
            }.start()
            wait(for: [seenElsewhere], timeout: 5)
        }
        XCTAssertNil(UpdateTransaction.current)
    }

    func testRequestsInsideAScopeCarryItAndItsCompletionOncePerDelivery() {
        var transaction = log.transaction("scope", .spring(duration: 0.3, bounce: 0))
        transaction[Marker.self] = 7
        var markers: [Int] = []
        context.onUpdateWithTransaction { markers.append($0[Marker.self]) }
        withUpdateTransaction(transaction) {
            context.setNeedsUpdate()
            context.setNeedsUpdate()
            context.setNeedsUpdate(animated: true)
        }
        scheduler.turn()
        XCTAssertEqual(deliveries, ["\(UpdateAnimation.spring(duration: 0.3, bounce: 0))"])
        XCTAssertEqual(markers, [7])
        XCTAssertEqual(log.all, ["scope:shown"], "one completion for the delivery that absorbed the scope's requests")
    }

    func testNeedsUpdatePropertiesInsideAScopeCarryIt() {
        final class Model: ViewUpdating {
            let updateContext: ViewUpdatingContext
            @NeedsUpdate var title = ""
            init(_ context: ViewUpdatingContext) { updateContext = context }
            func updateView(animated: Bool) {}
        }
        let model = Model(context)
        withUpdateAnimation(.easeOut(duration: 0.1)) { model.title = "changed" }
        scheduler.turn()
        XCTAssertEqual(deliveries, ["\(UpdateAnimation.easeOut(duration: 0.1))"])
    }

    /// A change to an `@Observable` property that a tracked updater read, made inside a scope: the request
    /// Observation makes for it carries the scope's transaction.
    func testATrackedChangeInsideAScopeCarriesIt() {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        let article = Article()
        context.onTrackedUpdate { _ in _ = article.title }
        XCTAssertNoThrow(try scheduler.runUntilIdle())  // the first delivery starts tracking (and earns one more)
        deliveries = []
        withUpdateAnimation(.easeInOut(duration: 0.4)) { article.title = "Changed" }
        scheduler.turn()
        XCTAssertEqual(deliveries, ["\(UpdateAnimation.easeInOut(duration: 0.4))"])
    }

    func testViewInvalidatingUpdateInsideAScopeCarriesIt() {
        final class Score: ViewUpdating {
            let updateContext: ViewUpdatingContext
            @ViewInvalidating(.update) var points = 0
            init(_ context: ViewUpdatingContext) { updateContext = context }
            func updateView(animated: Bool) {}
        }
        let score = Score(context)
        withUpdateAnimation(.linear(duration: 0.3)) { score.points = 3 }
        scheduler.turn()
        XCTAssertEqual(deliveries, ["\(UpdateAnimation.linear(duration: 0.3))"])
    }

    func testStateModifyWithATransaction() {
        let view = StateUpdatingContext(state: 0, scheduler: scheduler)
        var renders: [(Int, UpdateAnimation?)] = []
        view.onRender { state, _, _ in renders.append((state, view.context.deliveryTransaction?.animation)) }
        scheduler.turn()
        view.modify(transaction: log.transaction("changed", .easeIn(duration: 0.2))) { $0 = 1 }
        view.modify(transaction: log.transaction("equal")) { $0 = 1 }  // requests nothing
        XCTAssertEqual(log.all, ["equal:nothing requested"], "an unchanged state shows nothing: dropped at once")
        scheduler.turn()
        XCTAssertEqual(renders.map(\.0), [0, 1])
        XCTAssertEqual(renders.last?.1, .easeIn(duration: 0.2))
        XCTAssertEqual(log.all, ["equal:nothing requested", "changed:shown"])
    }

    /// The observable face says which animation the delivery had (SwiftUI's transaction is built from it).
    func testTheObservableFaceCarriesTheAnimation() {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        let face = context.observableDelivery
        context.setNeedsUpdate(transaction: UpdateTransaction(animation: .spring(duration: 0.3, bounce: 0.1)))
        scheduler.turn()
        XCTAssertEqual(face.delivery.animation, .spring(duration: 0.3, bounce: 0.1))
        context.setNeedsUpdate(animated: true)
        scheduler.turn()
        XCTAssertEqual(face.delivery.animation, .default)
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertNil(face.delivery.animation)
    }

    func testFlushedAnimationWithATransaction() {
        context.setNeedsUpdate()  // earlier: shown at once, not animated
        context.animateWithFlushedUpdates(transaction: log.transaction("flushed", .easeOut(duration: 0.3))) {
            XCTAssertEqual(deliveries, ["n"], "the earlier request was delivered first")
            context.setNeedsUpdate()
        }
        XCTAssertEqual(deliveries, ["n", "\(UpdateAnimation.easeOut(duration: 0.3))"])
        XCTAssertEqual(log.all, ["flushed:shown"])
        context.animateWithFlushedUpdates(transaction: log.transaction("nothing", .default)) {}
        XCTAssertEqual(log.all, ["flushed:shown", "nothing:nothing requested"])
        context.suspend()
        context.setNeedsUpdate(animated: false)
        context.animateWithFlushedUpdates(transaction: log.transaction("suspended", .default)) {
            context.setNeedsUpdate()
        }
        XCTAssertEqual(log.all.count, 2, "kept while suspended")
        context.resume()
        XCTAssertEqual(deliveries.last, "n", "the earlier non-animated request keeps the resume's delivery still")
        XCTAssertEqual(log.all, ["flushed:shown", "nothing:nothing requested", "suspended:shown"])
    }

    /// An async sequence's elements are consumed on a task of their own: the subscription carries the
    /// transaction they request with.
    func testAnAsyncSequenceRequestsWithItsTransaction() {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var transaction = UpdateTransaction(animation: .easeOut(duration: 0.2))
        transaction.addCompletion { [log] in log!.record("stream", $0) }
        let subscription = context.requestUpdates(from: stream, transaction: transaction)
        continuation.yield(1)
        continuation.yield(2)
        continuation.finish()
        let deadline = Date(timeIntervalSinceNow: 5)
        while context.runningSubscriptions > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        scheduler.turn()
        XCTAssertEqual(deliveries, ["\(UpdateAnimation.easeOut(duration: 0.2))"])
        XCTAssertEqual(log.all, ["stream:shown"], "one delivery absorbed both requests: one call")
        withExtendedLifetime(subscription) {}
    }

    func testAnExplicitFalseInsideAnAnimatedScopeStaysNotAnimated() {
        withUpdateAnimation(.default) { context.setNeedsUpdate(animated: false) }
        scheduler.turn()
        XCTAssertEqual(deliveries, ["n"])
    }

    func testAnimationDescriptionsAndDelay() {
        XCTAssertEqual(
            "\(UpdateAnimation.spring(duration: 0.5, bounce: 0.2).delay(0.1))", "spring(0.5, bounce: 0.2).delay(0.1)")
        XCTAssertEqual(UpdateAnimation.easeIn(duration: 0.2).delay(0.3).delay, 0.3)
        XCTAssertNotEqual(UpdateAnimation.linear(duration: 0.2), .linear(duration: 0.3))
    }
}
