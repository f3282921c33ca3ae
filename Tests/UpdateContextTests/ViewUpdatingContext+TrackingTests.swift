import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class Article: @unchecked Sendable {
    // @unchecked Sendable: the tests mutate it from one thread at a time (the main thread, or one
    // background thread they wait for).
    var title = "Draft"
    var body = ""
    var showsBody = false
}

/// Observation tracking: `onTrackedUpdate`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
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
        context.onTrackedUpdate { [unowned self] _ in
            seen.append(article.showsBody ? "\(article.title): \(article.body)" : article.title)
        }
        context.update()  // the first delivery starts tracking
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(seen, ["Draft"], "it earns no other")
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
            context.onTrackedUpdate { _ in
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
}

/// A hand-written `Observable` whose setter can pause between Observation's `willSet` (which reports
/// the change) and the store: a thread preempted at the worst moment, made deterministic.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class GatedValue: Observable, @unchecked Sendable {
    // @unchecked Sendable: `stored` is behind `lock`; the hooks are set before another thread uses it.
    private let registrar = ObservationRegistrar()
    private let lock = NSLock()
    private var stored = 0
    var beforeStore: (@Sendable () -> Void)?
    var afterStore: (@Sendable () -> Void)?

    var value: Int {
        get {
            registrar.access(self, keyPath: \.value)
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        set {
            registrar.withMutation(of: self, keyPath: \.value) {
                beforeStore?()
                lock.lock()
                stored = newValue
                lock.unlock()
                afterStore?()
            }
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class TrackingAcrossThreadsTests: XCTestCase {
    /// The main thread delivers between the change's willSet and its store on another thread: the
    /// delivery reads the old value, and the view must still end up showing the new one.
    func testAChangeStoredAfterTheDeliveryThatAnsweredItIsDeliveredAgain() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let model = GatedValue()
        let reported = DispatchSemaphore(value: 0)
        let readOld = DispatchSemaphore(value: 0)
        let stored = DispatchSemaphore(value: 0)
        model.beforeStore = {
            reported.signal()
            readOld.wait()
        }
        model.afterStore = { stored.signal() }
        var seen: [Int] = []
        context.onTrackedUpdate { _ in
            seen.append(model.value)
            if seen.count == 2 {
                readOld.signal()  // the stale read is done: let the other thread store…
                stored.wait()  // …and finish storing before this cycle ends
            }
        }
        context.update()
        let box = UncheckedBox(model)
        Thread.detachNewThread { box.value.value = 1 }
        reported.wait()  // willSet has reported the change; the value is not stored yet
        scheduler.turn()
        XCTAssertEqual(seen, [0, 0], "the delivery answering the change read the old value")
        try scheduler.runUntilIdle()
        XCTAssertEqual(seen, [0, 0, 1], "the view was left showing the old value")
        model.beforeStore = nil
        model.afterStore = nil
        model.value = 2  // and tracking still follows later changes
        try scheduler.runUntilIdle()
        XCTAssertEqual(seen, [0, 0, 1, 2])
    }

    func testChangesOnTheMainThreadAreDeliveredOnce() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let model = GatedValue()
        var seen: [Int] = []
        context.onTrackedUpdate { _ in seen.append(model.value) }
        context.update()
        model.value = 1
        XCTAssertEqual(try scheduler.runUntilIdle(), 1)
        XCTAssertEqual(seen, [0, 1])
    }
}
