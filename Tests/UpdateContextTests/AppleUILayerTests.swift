// Tests of the Combine and SwiftUI layers, for the macOS job of the GitHub workflow: Linux has neither
// module, so this file compiles to nothing there. The scenarios live in CoalescingTestSupport's
// AppleUIProbes.swift, which `apple-typecheck matrix .` type-checks against the SDKs; these tests only
// run them and assert.
#if canImport(Combine)
import CoalescingTestSupport
import Combine
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

final class CombineLayerTests: XCTestCase {
    func testValuesOfAPublisherCoalesceIntoOneAnimatedDelivery() {
        for fromAnotherThread in [false, true] {
            let result = playPublisherTrigger(values: 1_000, fromAnotherThread: fromAnotherThread)
            XCTAssertEqual(result.deliveriesAfterValues, 1, "from another thread: \(fromAnotherThread)")
            XCTAssertEqual(result.flags, [true])
            XCTAssertEqual(result.deliveriesAfterCancel, 0, "nothing after cancel()")
            XCTAssertTrue(result.cancelledAfterCancel)
            XCTAssertEqual(result.runningAfterCancel, 0)
            XCTAssertEqual(result.runningAfterCompletion, 0, "a completed publisher ends its subscription")
            XCTAssertTrue(result.cancelledAfterContextReleased)
            XCTAssertTrue(result.upstreamCancelledByRelease, "releasing the context cancels upstream")
            XCTAssertTrue(result.upstreamCancelledBySubscriptionRelease, "releasing the subscription cancels it")
            XCTAssertTrue(result.upstreamCancelledBySetRelease, "kept in a set: cancelled when the set lets it go")
        }
    }

    /// Every row of the precedence table: the ObservableObject face and the deliveries publisher say
    /// exactly what the updaters got.
    func testTheCombineFacesFollowThePrecedenceTable() {
        for row in PrecedenceTable.contract + PrecedenceTable.more {
            let result = playDeliveryFaces(timeline: row.timeline, defaultAnimated: row.defaultAnimated)
            XCTAssertEqual(result.updaters, row.expectedDeliveries, "\(row)")
            XCTAssertEqual(result.objectWillChange, row.expectedDeliveries, "\(row): objectWillChange")
            XCTAssertEqual(result.publisher, row.expectedDeliveries, "\(row): deliveries publisher")
            XCTAssertEqual(result.numbers, result.numbers.indices.map { UInt64($0 + 1) }, "\(row)")
        }
    }

    func testTheDeliveriesPublisherHonoursDemandAndCancel() {
        XCTAssertEqual(playDeliveriesDemand(demand: 2).received, 2)
        XCTAssertEqual(playDeliveriesDemand(demand: 10).received, 5)
        XCTAssertEqual(playDeliveriesDemand(demand: 10).afterCancel, 0)
    }
}
#endif

#if canImport(SwiftUI) && canImport(AppKit) && canImport(Combine)
import AppKit
import CoalescingTestSupport
import SwiftUI
import XCTest

/// SwiftUI itself, hosted in an `NSHostingView`: the gates' rows as Linux checks them on a model.
@MainActor
final class SwiftUIGateHostingTests: XCTestCase {
    func testEveryRowOfEachGatesTableInSwiftUI() {
        for row in GateTable.rows {
            XCTAssertEqual(GateHostProbe(kind: row.kind).play(row.timeline), row.expected, "\(row)")
        }
    }

    func testAViewGatedOnAContextIsEvaluatedOncePerDeliveryNotPerRequest() {
        let result = playDeliveryGate(requestsPerCycle: 10_000, cycles: 5)
        XCTAssertGreaterThanOrEqual(result.deliveries, 5)
        XCTAssertLessThanOrEqual(result.deliveries, 10, "requests coalesce")
        XCTAssertGreaterThanOrEqual(result.evaluations, 1)
        XCTAssertLessThanOrEqual(result.evaluations, result.deliveries, "at most one evaluation per delivery")
    }
}
#endif

#if canImport(AppKit)
import AppKit
import CoalescingTestSupport
import XCTest

/// `@ViewInvalidating` on real AppKit views (the macOS job only).
@MainActor
final class AppKitInvalidationTests: XCTestCase {
    func testViewInvalidationsReachAppKitAndTheViewIsTold() {
        let result = playAppKitInvalidations()
        XCTAssertTrue(result.needsLayoutAfterSet, ".layout set needsLayout")
        XCTAssertFalse(result.needsLayoutAfterEqualSet, "an equal value invalidates nothing")
        XCTAssertTrue(result.needsDisplayAfterSet, ".display set needsDisplay")
        XCTAssertEqual(result.customCalls, 1, "the custom invalidation ran once")
        XCTAssertEqual(result.callbacks, 2, "the observing view was told after each change")
        XCTAssertEqual(result.deliveries, [true], ".update(animated: true) asked for one animated update")
    }
}
#endif

#if canImport(AppKit)
import AppKit
import CoalescingTestSupport
import XCTest

/// A forgotten `startUpdatingView()` of a view controller is reported only once its view is loaded (a controller
/// made ahead of its view connects later, in `viewDidLoad`). The macOS job only.
@MainActor
final class AppKitNothingConnectedTests: XCTestCase {
    private final class Controller: NSViewController, ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var count = 0
        init(scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: "appkit forgotten", scheduler: scheduler, refreshEvents: [])
            super.init(nibName: nil, bundle: nil)
        }
        required init?(coder: NSCoder) { nil }
        override func loadView() { view = NSView() }
        func updateView(animated: Bool) {}
    }

    func testAControllerIsReportedOnlyOnceItsViewIsLoaded() {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        let scheduler = ManualScheduler()
        let controller = Controller(scheduler: scheduler)
        controller.count = 1
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "appkit forgotten").isEmpty, "its view is not loaded yet")
        _ = controller.view
        controller.count = 2
        scheduler.turn()
        XCTAssertEqual(recorder.reports(label: "appkit forgotten", kind: .nothingConnected).count, 1)
    }
}
#endif
