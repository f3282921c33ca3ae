import Foundation
import NotificationCoalescing
import Observation
import UpdateContext
import XCTest

@Observable
final class Article: @unchecked Sendable {
    // @unchecked Sendable: the tests mutate it from one thread at a time (the main thread, or one
    // background thread they wait for).
    var title = "Draft"
    var body = ""
    var showsBody = false
}

/// Observation tracking: `onUpdate(tracking: true)`.
final class TrackingTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    private var article: Article!
    private var seen: [String] = []

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        article = Article()
        seen = []
        context.onUpdate(tracking: true) { [unowned self] _ in
            seen.append(article.showsBody ? "\(article.title): \(article.body)" : article.title)
        }
        context.update()  // the first delivery starts tracking
    }

    func testAChangeToWhatTheUpdaterReadRequestsAnUpdate() {
        article.title = "Final"
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(seen, ["Draft", "Final"])
    }

    func testOnlyWhatTheUpdaterReadIsTracked() {
        article.body = "not read yet"
        XCTAssertFalse(context.isUpdatePending, "body was not read by the last delivery")
        article.showsBody = true
        scheduler.turn()
        XCTAssertEqual(seen.last, "Draft: not read yet")
        article.body = "now read"
        XCTAssertTrue(context.isUpdatePending, "re-tracked after the delivery: body is read now")
        scheduler.turn()
        XCTAssertEqual(seen.last, "Draft: now read")
    }

    func testRetracksAfterEveryDelivery() {
        for i in 0..<5 {
            article.title = "v\(i)"
            scheduler.turn()
        }
        XCTAssertEqual(seen, ["Draft", "v0", "v1", "v2", "v3", "v4"])
    }

    func testManyChangesInOneCycleDeliverOnce() {
        for i in 0..<50 { article.title = "v\(i)" }
        scheduler.turn()
        XCTAssertEqual(seen, ["Draft", "v49"])
        scheduler.turn()
        XCTAssertEqual(seen.count, 2)
    }

    func testAChangeOnAnotherThreadIsDeliveredOnTheMainThread() {
        let article = UncheckedBox(article!)
        onAnotherThread {
            article.value.title = "From afar"
        }
        scheduler.turn()
        XCTAssertEqual(seen, ["Draft", "From afar"])
    }

    func testReleasedContextIsFreedAndAChangeAfterwardsIsHarmless() {
        weak var weakContext: ViewUpdatingContext?
        let article = Article()
        var calls = 0
        do {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            context.onUpdate(tracking: true) { _ in
                calls += 1
                _ = article.title
            }
            context.update()
            weakContext = context
        }
        XCTAssertNil(weakContext)
        article.title = "after"
        scheduler.turn()
        XCTAssertEqual(calls, 1)
    }

    func testTrackingFalseIsAPlainUpdater() {
        var calls = 0
        let article = Article()
        context.onUpdate(tracking: false) { _ in
            calls += 1
            _ = article.title
        }
        context.update()
        article.title = "x"
        XCTAssertFalse(context.isUpdatePending)
        XCTAssertEqual(calls, 1)
    }
}

/// `setNeedsUpdate(on:animated:)`.
final class AsyncSequenceTriggerTests: XCTestCase {
    private func waitUntil(_ condition: () -> Bool, timeout: TimeInterval = 5) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    }

    func testEachElementRequestsAndRequestsCoalesce() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        context.setNeedsUpdate(on: stream, animated: true)
        for i in 0..<10 { continuation.yield(i) }
        continuation.finish()
        // Every element has been consumed once the subscription has ended.
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "a", "ten elements, one delivery")

        let (more, moreContinuation) = AsyncStream.makeStream(of: Int.self)
        let subscription = context.setNeedsUpdate(on: more)
        moreContinuation.yield(10)
        waitUntil { context.isUpdatePending }
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "an")
        subscription.cancel()
    }

    func testCancelStopsIt() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        let subscription = context.setNeedsUpdate(on: stream)
        XCTAssertEqual(context.runningSubscriptions, 1)
        subscription.cancel()
        XCTAssertTrue(subscription.isCancelled)
        XCTAssertEqual(terminated.wait(timeout: .now() + 5), .success, "the iteration ended")
        continuation.yield(1)
        Thread.sleep(forTimeInterval: 0.02)
        XCTAssertFalse(context.isUpdatePending)
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
    }

    func testEndsWhenTheSequenceFinishes() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        context.setNeedsUpdate(on: stream)
        continuation.yield(1)
        continuation.finish()
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
    }

    func testEndsWhenTheContextIsReleased() {
        let scheduler = ManualScheduler()
        weak var weakContext: ViewUpdatingContext?
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        var subscription: UpdateSubscription?
        do {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            subscription = context.setNeedsUpdate(on: stream)
            weakContext = context
        }
        XCTAssertNil(weakContext)
        XCTAssertEqual(terminated.wait(timeout: .now() + 5), .success, "the task stopped following the stream")
        XCTAssertTrue(subscription!.isCancelled)
        continuation.yield(1)
        scheduler.turn()
    }
}

/// `StateUpdatingContext`.
final class StateUpdatingContextTests: XCTestCase {
    struct Screen: Equatable {
        var title = ""
        var count = 0
    }

    private var scheduler: ManualScheduler!
    private var view: StateUpdatingContext<Screen>!
    private var renders: [(state: Screen, old: Screen?, animated: Bool)] = []

    override func setUp() {
        scheduler = ManualScheduler()
        view = StateUpdatingContext(state: Screen(), scheduler: scheduler)
        renders = []
        view.onRender { [unowned self] state, old, animated in renders.append((state, old, animated)) }
    }

    func testManyChangesOneRenderWithTheStateAtFlushTime() {
        view.update { $0.title = "a" }
        view.update { $0.count += 1 }
        view.state.count += 1
        XCTAssertEqual(renders.count, 0)
        scheduler.turn()
        XCTAssertEqual(renders.count, 1)
        XCTAssertEqual(renders[0].state, Screen(title: "a", count: 2))
        XCTAssertNil(renders[0].old, "nothing was rendered before")
    }

    func testOldStateIsTheLastRenderedState() {
        view.state = Screen(title: "one", count: 1)
        scheduler.turn()
        view.state = Screen(title: "two", count: 2)
        view.state = Screen(title: "three", count: 3)
        scheduler.turn()
        XCTAssertEqual(renders.map(\.state.title), ["one", "three"])
        XCTAssertEqual(renders[1].old, Screen(title: "one", count: 1), "not the intermediate state")
    }

    func testAnEqualValueRequestsNothing() {
        view.state = Screen()
        view.update { $0.title = "" }
        XCTAssertFalse(view.context.isUpdatePending)
    }

    func testChangesThatCancelOutWithinACycleRenderNothing() {
        view.state.title = "shown"
        scheduler.turn()
        view.state.title = "changed"
        view.state.title = "shown"
        scheduler.turn()
        XCTAssertEqual(renders.count, 1)
        view.context.update()
        XCTAssertEqual(renders.count, 1, "a forced update with an unchanged state renders nothing")
    }

    func testAnimatedFlagReachesTheRenderer() {
        view.update(animated: true) { $0.count = 5 }
        scheduler.turn()
        XCTAssertEqual(renders.map(\.animated), [true])
    }

    func testEveryRendererGetsTheSameFrame() {
        var second: [Screen] = []
        let token = view.onRender { state, _, _ in second.append(state) }
        view.state.count = 1
        scheduler.turn()
        XCTAssertEqual(second, [Screen(title: "", count: 1)])
        XCTAssertEqual(renders.count, 1)
        token.remove()
        view.state.count = 2
        scheduler.turn()
        XCTAssertEqual(second.count, 1)
        XCTAssertEqual(renders.count, 2)
    }

    func testReleasedIsFreed() {
        weak var weakView: StateUpdatingContext<Screen>?
        var calls = 0
        do {
            let view = StateUpdatingContext(state: Screen(), scheduler: scheduler)
            view.onRender { _, _, _ in calls += 1 }
            view.state.count = 1
            weakView = view
        }
        XCTAssertNil(weakView)
        scheduler.turn()
        XCTAssertEqual(calls, 0)
    }
}
