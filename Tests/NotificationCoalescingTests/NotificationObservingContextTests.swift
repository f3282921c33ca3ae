import Foundation
import NotificationCoalescing
import XCTest

final class NotificationObservingContextTests: XCTestCase {
    struct Ping: ObservableNotification, Equatable { var n: Int }

    func testObservesUntilReleased() {
        let center = NotificationCenter()
        var calls = 0
        weak var weakContext: NotificationObservingContext?
        do {
            let context = NotificationObservingContext(center: center)
            context.observe(.a) { _, _ in calls += 1 }
            center.post(name: .a, object: nil)
            weakContext = context
        }
        XCTAssertNil(weakContext)
        center.post(name: .a, object: nil)
        XCTAssertEqual(calls, 1)
    }

    func testRemoveObserversAndTokenCount() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        var calls = 0
        let token = context.observe(.a) { _, _ in calls += 1 }
        context.observe(.b) { _, _ in calls += 1 }
        XCTAssertEqual(context.observerCount, 2)
        token.remove()
        XCTAssertEqual(context.observerCount, 1)
        context.removeObservers()
        XCTAssertEqual(context.observerCount, 0)
        center.post(name: .a, object: nil)
        center.post(name: .b, object: nil)
        XCTAssertEqual(calls, 0)
        context.observe(.a) { _, _ in calls += 1 }
        center.post(name: .a, object: nil)
        XCTAssertEqual(calls, 1, "usable after removeObservers()")
    }

    func testObjectFilterIsByIdentity() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        let mine = SwiftSender()
        var calls = 0
        context.observe(.a, object: mine) { _, _ in calls += 1 }
        center.post(name: .a, object: SwiftSender())
        center.post(name: .a, object: mine)
        XCTAssertEqual(calls, 1)
    }

    func testTypedObserveInfersTheType() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        var got: [Ping] = []
        context.observe { (_, ping: Ping) in got.append(ping) }
        center.post(Ping(n: 7))
        XCTAssertEqual(got, [Ping(n: 7)])
        XCTAssertEqual(Ping(Ping(n: 8).notification()), Ping(n: 8))
        XCTAssertNil(Ping(Notification(name: .a)))
    }

    func testDefaultNameIsDerivedFromTheType() {
        struct Other: ObservableNotification {}
        XCTAssertNotEqual(Ping.name, Other.name)
        XCTAssertTrue(Ping.name.rawValue.contains("Ping"))
    }

    func testHandlerRunsOnThePostingThread() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        let recorder = Recorder()
        context.observe(.a) { _, note in recorder.record(note) }
        let done = expectation(description: "posted")
        DispatchQueue.global().async {
            center.post(name: .a, object: nil)
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(recorder.offMainCount, 1)
    }

    func testTokenRemovalRacesAreHarmless() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        let tokens = (0..<200).map { _ in context.observe(.a) { _, _ in } }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for token in tokens { token.remove() }
        }
        XCTAssertEqual(context.observerCount, 0)
        XCTAssertTrue(tokens.allSatisfy { !$0.isActive })
    }
}

/// The contract's initialiser names, as a client writes them.
final class CoalescingInitialiserNameTests: XCTestCase {
    func testTheSeedsInitialiserAndTheFullOneCoexist() {
        let make: (NotificationCenter) -> NotificationCoalescingContext = NotificationCoalescingContext.init(center:)
        let center = NotificationCenter()
        XCTAssertTrue(make(center).center === center)
        XCTAssertTrue(
            NotificationCoalescingContext().scheduler === RunLoopScheduler.mainRunLoop, "XCTest runs on the main thread"
        )
        let manual = ManualScheduler()
        XCTAssertTrue(NotificationCoalescingContext(scheduler: manual).scheduler === manual)
        let observing: (NotificationCenter) -> NotificationObservingContext = NotificationObservingContext.init(center:)
        XCTAssertTrue(observing(center).center === center)
    }
}
