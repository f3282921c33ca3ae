import Foundation
import NotificationCoalescing
import Observation
import UpdateContext
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

/// Observation tracking: `onUpdate(tracking: true)`.
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
