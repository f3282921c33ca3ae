import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import UpdateContextCompatibility
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// What a diagnostics report names: a delivery names the first request it absorbed (not one made during it),
/// each request route names the user's line, a generic owner's property is named, `@ViewInvalidating(.update)`
/// does not hide a forgotten `startUpdatingView()`, and a just-requested turn after an idle second is not
/// called overdue.
final class DiagnosticsNamingTests: XCTestCase {
    private var recorder: ReportRecorder!
    private var scheduler: ManualScheduler!

    override func setUp() {
        recorder = ReportRecorder()
        scheduler = ManualScheduler()
    }

    override func tearDown() {
        recorder.stop()
        UpdateDiagnostics.isRecording = false
    }

    // MARK: The ledger: a delivery names the first request it absorbed, taken before its updaters run

    func testADeliveryCausedByARequestMadeInsideTheLastDeliveryNamesIt() {
        let context = ViewUpdatingContext(label: "inside", scheduler: scheduler, refreshEvents: [])
        var line: UInt = 0
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            if calls == 1 {
                line = #line + 1
                context.setNeedsUpdate()
            }
        }
        UpdateDiagnostics.isRecording = true
        let first: UInt = #line + 1
        context.setNeedsUpdate()
        scheduler.turn()
        scheduler.turn()
        let deliveries = recorder.reports(label: "inside", kind: .delivery)
        XCTAssertEqual(deliveries.map { $0.callSite?.line }, [first, line])
    }

    func testADeliveryIsNotBlamedOnARequestMadeByItsOwnUpdaterOrAnotherThreadDuringIt() {
        let context = ViewUpdatingContext(label: "blame", scheduler: scheduler, refreshEvents: [])
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            if calls == 1 { onAnotherThread { context.setNeedsUpdate(line: 4_711) } }
        }
        context.setNeedsUpdate()  // before recording
        UpdateDiagnostics.isRecording = true
        scheduler.turn()
        scheduler.turn()
        let deliveries = recorder.reports(label: "blame", kind: .delivery)
        XCTAssertEqual(deliveries.count, 2)
        XCTAssertNil(deliveries.first?.callSite, "its request was made before recording")
        XCTAssertEqual(deliveries.last?.callSite?.line, 4_711)
    }

    func testARequestRecordedDuringAnUnrecordedDeliveryIsNamedByTheDeliveryThatAbsorbsIt() {
        let context = ViewUpdatingContext(label: "toggle", scheduler: scheduler, refreshEvents: [])
        var line: UInt = 0
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            if calls == 1 {
                UpdateDiagnostics.isRecording = true
                line = #line + 1
                context.setNeedsUpdate()
            }
        }
        context.setNeedsUpdate()
        scheduler.turn()
        scheduler.turn()
        let deliveries = recorder.reports(label: "toggle", kind: .delivery)
        XCTAssertEqual(deliveries.map { $0.callSite?.line }, [line])
    }

    // MARK: Every route names the user's code

    private func assertNamesUserCode(
        _ site: UpdateDiagnostics.Report.CallSite?, _ what: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let site else { return XCTFail("\(what): no site", file: file, line: line) }
        XCTAssertFalse(
            site.file.hasPrefix("UpdateContext/") || site.file.hasPrefix("UpdateContextCompatibility/"),
            "\(what) is reported at the library's line: \(site)", file: file, line: line)
    }

    func testSettingAStateUpdatingContextsStateNamesTheProperty() {
        let state = StateUpdatingContext(label: "state", state: 0, scheduler: scheduler, refreshEvents: [])
        state.onRender { _, _, _ in }
        scheduler.turn()
        UpdateDiagnostics.isRecording = true
        state.state = 1
        scheduler.turn()
        let site = recorder.reports(label: "state", kind: .delivery).last?.callSite
        assertNamesUserCode(site, "state =")
        XCTAssertEqual(site?.file, "StateUpdatingContext.state")
    }

    struct Profile: Equatable, Sendable { var name = "" }

    @MainActor final class RenderedProfileController: StateRendering {
        @RenderedState var state: Profile
        init(scheduler: ManualScheduler) {
            _state = RenderedState(wrappedValue: Profile(), scheduler: scheduler)
        }
        func render(state: Profile, oldState: Profile?, animated: Bool) {}
    }

    @MainActor
    func testARenderedStatePropertyNamesItself() {
        do {
            let controller = RenderedProfileController(scheduler: scheduler)
            _ = controller.state  // connects
            scheduler.turn()
            UpdateDiagnostics.isRecording = true
            controller.state.name = "Ada"
            scheduler.turn()
            let site = recorder.reports(label: controller.$state.label, kind: .delivery).last?.callSite
            assertNamesUserCode(site, "@RenderedState")
            XCTAssertTrue(site?.file.contains("@RenderedState") == true, "\(String(describing: site))")
            XCTAssertTrue(site?.file.contains("RenderedProfileController.state") == true, "\(String(describing: site))")
        }
    }

    func testTheFirstDeliveriesOfOnRenderAndOnTrackedUpdateNameTheirCaller() {
        UpdateDiagnostics.isRecording = true
        let state = StateUpdatingContext(label: "render", state: 0, scheduler: scheduler, refreshEvents: [])
        let renderLine: UInt = #line + 1
        state.onRender { _, _, _ in }
        scheduler.turn()
        XCTAssertEqual(recorder.reports(label: "render", kind: .delivery).last?.callSite?.line, renderLine)
        guard #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) else { return }
        let tracked = ViewUpdatingContext(label: "tracked", scheduler: scheduler, refreshEvents: [])
        let trackedLine: UInt = #line + 1
        tracked.onTrackedUpdate { _ in }
        scheduler.turn()
        XCTAssertEqual(recorder.reports(label: "tracked", kind: .delivery).last?.callSite?.line, trackedLine)
    }

    final class ListViewController<Item>: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var title = ""
        init(scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: "generic", scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) {}
    }

    func testANeedsUpdatePropertyOfAGenericOwnerNamesItself() {
        let controller = ListViewController<Int>(scheduler: scheduler)
        onMainActor(controller) { $0.startUpdatingView() }
        UpdateDiagnostics.isRecording = true
        controller.title = "Inbox"
        scheduler.turn()
        let site = recorder.reports(label: "generic", kind: .delivery).last?.callSite
        XCTAssertTrue(site?.file.hasPrefix("@NeedsUpdate ") == true, "\(String(describing: site))")
        XCTAssertTrue(site?.file.hasSuffix(".title") == true, "\(String(describing: site))")
        XCTAssertTrue(site?.file.contains("ListViewController<") == true, "\(String(describing: site))")
    }

    // MARK: A forgotten startUpdatingView() through @ViewInvalidating(.update)

    final class BadgeView: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @ViewInvalidating(.update) var count = 0
        init(scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: "badge", scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) {}
    }

    func testAForgottenStartUpdatingViewWithViewInvalidatingIsNamedByTheDescription() {
        let view = BadgeView(scheduler: scheduler)
        view.count = 3
        scheduler.turn()
        XCTAssertTrue(
            view.updateContext.debugDescription.contains("0 updaters"), view.updateContext.debugDescription)
        XCTAssertTrue(
            view.updateContext.debugDescription.contains("startUpdatingView()"), view.updateContext.debugDescription)
    }

    // MARK: Overdue means asked for more than a second ago

    func testAJustRequestedTurnAfterAnIdleSecondIsNotCalledOverdue() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "idle", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.setNeedsUpdate()
        scheduler.turn()
        clock.advanceClock(milliseconds: 1_300)  // the app idles: nothing asks for a turn
        context.setNeedsUpdate()
        XCTAssertFalse(context.debugDescription.contains("has not begun"), context.debugDescription)
        clock.advanceClock(milliseconds: 1_300)  // and now the asked-for turn has not begun for a second
        XCTAssertTrue(context.debugDescription.contains("has not begun"), context.debugDescription)
        scheduler.turn()
    }
}
