import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import UpdateContext
import XCTest

@testable import CoalescingRuntime

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class ObservedProfile: @unchecked Sendable {
    // @unchecked Sendable: the tests mutate it from one thread at a time (the main thread, or one
    // background thread they wait for).
    var name = "Ada"
    var bio = ""
    var showsBio = false
}

/// A canonical-path object over an `@Observable` model: what `updateView` read, and how, per delivery.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class ProfileView: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread, or by another thread in a step the test waits for.
    let updateContext: ViewUpdatingContext
    let profile: ObservedProfile
    @NeedsUpdate var badge = 0
    /// Not observable: hides the bio whatever the model says.
    var hidesBio = false
    var shown: [String] = []

    init(scheduler: ManualScheduler, profile: ObservedProfile) {
        updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        self.profile = profile
    }

    func updateView(animated: Bool) {
        var text = profile.showsBio && !hidesBio ? "\(profile.name): \(profile.bio)" : profile.name
        if badge != 0 { text += " #\(badge)" }
        shown.append(text + (animated ? "/a" : "/n"))
    }
}

/// Observation in `updateView(animated:)`: what the canonical path's render reads of an `@Observable`
/// model is tracked (CONTRACT.md, "The canonical path"), checked by what each delivery showed.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ViewUpdatingObservationTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var profile: ObservedProfile!
    private var view: ProfileView!

    override func setUp() {
        scheduler = ManualScheduler()
        profile = ObservedProfile()
        view = ProfileView(scheduler: scheduler, profile: profile)
    }

    /// Connects the view: it renders once, at once, and nothing more in that cycle.
    private func startAndSettle() {
        onMainActor(view) { $0.startUpdatingView() }
        XCTAssertEqual(try scheduler.runUntilIdle(), 0, "the first cycle renders once")
        XCTAssertEqual(view.shown.count, 1)
    }

    func testSeveralChangesInACycleMakeOneDeliveryShowingTheLast() {
        startAndSettle()
        XCTAssertEqual(view.shown, ["Ada/n"])
        profile.name = "Grace"
        profile.name = "Barbara"
        view.badge = 3  // and a @NeedsUpdate request: still one delivery
        XCTAssertTrue(view.updateContext.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n", "Barbara #3/n"])
        scheduler.turn()
        XCTAssertEqual(view.shown.count, 2)
    }

    func testTrackingReArmsAfterEveryDelivery() {
        startAndSettle()
        for i in 1...5 {
            profile.name = "v\(i)"
            XCTAssertTrue(view.updateContext.isUpdatePending, "re-armed by delivery \(i)")
            scheduler.turn()
        }
        XCTAssertEqual(view.shown, ["Ada/n", "v1/n", "v2/n", "v3/n", "v4/n", "v5/n"])
    }

    func testOnlyWhatTheLastDeliveryReadIsTracked() {
        startAndSettle()
        profile.bio = "not read"
        XCTAssertFalse(view.updateContext.isUpdatePending, "bio was not read")
        profile.showsBio = true
        scheduler.turn()
        profile.bio = "read now"
        XCTAssertTrue(view.updateContext.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(view.shown.last, "Ada: read now/n")
    }

    func testAChangeOnAnotherThreadIsDeliveredAndTheViewEndsShowingIt() {
        startAndSettle()
        let profile = UncheckedBox(profile!)
        let done = DispatchSemaphore(value: 0)
        onAnotherThread {
            profile.value.name = "From afar"
            done.signal()
        }
        done.wait()
        XCTAssertTrue(view.updateContext.isUpdatePending)
        scheduler.turn()
        scheduler.turn()  // the follow-up a change on another thread earns (see onTrackedUpdate)
        XCTAssertEqual(view.shown.last, "From afar/n")
        XCTAssertLessThanOrEqual(view.shown.count, 3)
    }

    /// Off-main tracked changes (the stated limit: make tracked changes on the main actor): debug builds report
    /// every one, counted, at most once a second by the scheduler's clock; release builds report the first one
    /// per updater only.
    func testOffMainTrackedChangesAreCountedInDebugBuildsAndReportedOnceInRelease() {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        startAndSettle()
        let profile = UncheckedBox(profile!)
        func changeOffMain(_ name: String) {
            onAnotherThread { profile.value.name = name }
            _ = try? scheduler.runUntilIdle()
        }
        for name in ["a", "b", "c"] { changeOffMain(name) }  // within one second of the scheduler's clock
        var reports = recorder.all.filter { $0.kind == .trackedChangeOffMainThread }
        XCTAssertEqual(reports.count, 1, "the first at once, the next two counted: \(reports)")
        XCTAssertTrue(reports.first?.message.contains("ProfileView.updateView(animated:)") == true, "\(reports)")
        scheduler.advanceClock(by: 1.5)
        changeOffMain("d")
        reports = recorder.all.filter { $0.kind == .trackedChangeOffMainThread }
        if Misuse.isDebugBuild {
            XCTAssertEqual(reports.count, 2, "\(reports)")
            XCTAssertTrue(reports.last?.message.contains("(3 changes since the last report)") == true, "\(reports)")
        } else {
            XCTAssertEqual(reports.count, 1, "release builds: the first per updater: \(reports)")
        }
        XCTAssertEqual(view.shown.last, "d/n")
    }

    func testAChangeInsideWithUpdateAnimationAnimatesAfterFlushingThePendingNonAnimatedUpdate() {
        startAndSettle()
        view.updateContext.setNeedsUpdate(animated: false)  // a non-animated update is pending
        withUpdateAnimation(.easeOut(duration: 0.2)) { profile.name = "Animated" }
        // The flush ran at the change's willSet: it showed the old value, not animated.
        XCTAssertEqual(view.shown, ["Ada/n", "Ada/n"])
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n", "Ada/n", "Animated/a"])
    }

    func testAChangeInsideWithUpdateAnimationAloneAnimates() {
        startAndSettle()
        let completions = SendableLog()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { completions.append("\($0)") }
        withUpdateTransaction(transaction) { profile.name = "Animated" }
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n", "Animated/a"])
        XCTAssertEqual(completions.entries.count, 1, "the change carried the transaction: told once")
    }

    /// A plain tracked change, then a change inside an animated scope in the same cycle: entering the scope
    /// delivers the pending update first (`.flushUpdates`), so the scope's change is reported, animates and
    /// completes the scope (0.2.0 showed both without animation and told the completion "dropped").
    func testAChangeInAnAnimatedScopeAfterAPlainOneAnimatesTheScopeFlushingFirst() {
        startAndSettle()
        profile.name = "First"
        let completions = SendableLog()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { completions.append("\($0)") }
        withUpdateTransaction(transaction) { profile.name = "Second" }
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n", "First/n", "Second/a"])
        XCTAssertEqual(completions.entries, ["shown(finished: true)"])
        // The closure form in a scope: the same.
        profile.name = "Third"
        withUpdateAnimation {
            view.setNeedsUpdate(animated: true) { profile.name = "Fourth" }
        }
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n", "First/n", "Second/a", "Third/n", "Fourth/a"])
    }

    /// Found by the outside review: a delivery that no tracked change caused left the earlier tracking armed,
    /// so a property only an earlier delivery read still requested ("Only what the last delivery read is
    /// tracked").
    func testAPropertyOnlyAnEarlierDeliveryReadRequestsNothing() {
        profile.showsBio = true
        startAndSettle()  // reads name, showsBio and bio
        view.hidesBio = true
        view.setNeedsUpdate()  // a delivery no tracked change caused: reads name and showsBio only
        scheduler.turn()
        profile.bio = "read by no delivery since"
        XCTAssertFalse(view.updateContext.isUpdatePending, "bio was read only by an earlier delivery")
        profile.name = "Read"
        XCTAssertTrue(view.updateContext.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada: /n", "Ada/n", "Read/n"])
    }

    /// Found by the outside review: every delivery that no tracked change caused added one more Observation
    /// registration (each delivery tracked anew, and the old tracking is never cancelled by Observation until
    /// a property it read changes): after N of them, one change made N requests, and memory grew with N.
    /// ("Long-lived registrations cost the same at their millionth call as at their first.")
    func testTrackingRegistrationsDoNotAccumulateAcrossDeliveries() {
        startAndSettle()
        for _ in 0..<2_000 {
            view.setNeedsUpdate()
            scheduler.turn()
        }
        let absorbed = absorbedPerDelivery {
            profile.name = "Once"
            scheduler.turn()
        }
        XCTAssertEqual(absorbed, ["1"], "one change, one request")
        XCTAssertEqual(view.shown.last, "Once/n")
    }

    /// The same for `onTrackedUpdate`, which shares the tracking: memory stays flat over many deliveries that
    /// no tracked change caused (each retires the tracking before it).
    func testOnTrackedUpdateKeepsOneTrackingAcrossUntrackedDeliveries() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let profile = profile!
        var seen: [String] = []
        context.onTrackedUpdate { _ in seen.append(profile.name) }
        scheduler.turn()
        for _ in 0..<2_000 {
            context.setNeedsUpdate()
            scheduler.turn()
        }
        let absorbed = absorbedPerDelivery {
            profile.name = "Once"
            scheduler.turn()
        }
        XCTAssertEqual(absorbed, ["1"])
        XCTAssertEqual(seen.count, 2_002)
        XCTAssertEqual(seen.last, "Once")
    }

    /// How many requests each delivery `body` makes absorbed (diagnostics recording, on for `body` only).
    private func absorbedPerDelivery(_ body: () -> Void) -> [String] {
        let reports = SendableLog()
        let old = UpdateDiagnostics.handler
        UpdateDiagnostics.handler = { report in
            if report.kind == .delivery { reports.append("\(report.absorbedRequests ?? -1)") }
        }
        UpdateDiagnostics.isRecording = true
        defer {
            UpdateDiagnostics.isRecording = false
            UpdateDiagnostics.handler = old
        }
        body()
        return reports.entries
    }

    func testTheOptOutTracksNothing() {
        onMainActor(view) { $0.startUpdatingView(tracksObservation: false) }
        profile.name = "Untracked"
        XCTAssertFalse(view.updateContext.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n"])
        view.badge = 1  // the object's own requests still work
        scheduler.turn()
        XCTAssertEqual(view.shown, ["Ada/n", "Untracked #1/n"])
    }

    func testAReleasedObjectIsNotKeptAliveByTrackingAndAChangeAfterItRequestsNothingHarmful() {
        weak var released: ProfileView?
        do {
            let view = ProfileView(scheduler: scheduler, profile: profile)
            onMainActor(view) { $0.startUpdatingView() }
            XCTAssertNoThrow(try scheduler.runUntilIdle())
            released = view
        }
        self.view = nil
        XCTAssertNil(released, "tracking keeps neither the object nor its context")
        profile.name = "After"
        XCTAssertEqual(scheduler.turn(), 0, "nothing to deliver")
    }
}
