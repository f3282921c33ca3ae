import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// Each deprecated alias behaves exactly as the name it was renamed to (or, where the new name changed
/// behaviour on purpose, as the old name did). The calls live in deprecated witnesses reached through a
/// protocol, so that this target still builds with warnings as errors; `.ci/check-old-code` checks that
/// old code compiles with the warnings.
private protocol OldSpellings {
    static func animatedIsAnimatesByDefault() -> (Bool, Bool)
    static func stateUpdateIsModify(scheduler: ManualScheduler) -> [String]
    static func droppedSequenceSubscriptionKeepsRunning(scheduler: ManualScheduler) -> (UpdateSubscription?, Bool)
    static func schedulerSpellingsAreTheSameObjects() -> [Bool]
    static func passContextFactory() -> ViewUpdatingContext
    static func noneIsInitial() -> Bool
    static func trackingFalseIsAPlainUpdater(scheduler: ManualScheduler) -> (Int, Bool)
}

private enum Old: OldSpellings {
    @available(*, deprecated)
    static func animatedIsAnimatesByDefault() -> (Bool, Bool) {
        let context = ViewUpdatingContext(refreshEvents: [])
        context.animated = true
        let first = context.animatesByDefault
        context.animatesByDefault = false
        return (first, context.animated)
    }

    @available(*, deprecated)
    static func stateUpdateIsModify(scheduler: ManualScheduler) -> [String] {
        let view = StateUpdatingContext(state: "a", scheduler: scheduler)
        var rendered: [String] = []
        view.onRender { state, _, _ in rendered.append(state) }
        scheduler.turn()
        view.update { $0 = "b" }
        view.update(animated: true) { $0 = "c" }
        scheduler.turn()
        return rendered
    }

    @available(*, deprecated)
    static func droppedSequenceSubscriptionKeepsRunning(scheduler: ManualScheduler) -> (UpdateSubscription?, Bool) {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        weak let dropped = context.setNeedsUpdate(on: stream)  // the old habit: the result not kept
        continuation.yield(1)
        let deadline = Date(timeIntervalSinceNow: 5)
        while !context.isUpdatePending && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        let pending = context.isUpdatePending
        continuation.finish()
        return (dropped, pending)
    }

    @available(*, deprecated)
    static func schedulerSpellingsAreTheSameObjects() -> [Bool] {
        [
            RunLoopScheduler.main === CoalescingScheduler.mainRunLoop,
            RunLoopScheduler.current === CoalescingScheduler.currentRunLoop,
            DispatchMainScheduler.shared === CoalescingScheduler.dispatchMain,
            FramePacedScheduler.main === CoalescingScheduler.framePaced,
        ]
    }

    @available(*, deprecated)
    static func passContextFactory() -> ViewUpdatingContext {
        ViewUpdatingContext.forUpdatePropertiesPass(animated: true, refreshEvents: [])
    }

    @available(*, deprecated)
    static func noneIsInitial() -> Bool {
        ContextDelivery.none == ContextDelivery.initial
    }

    @available(*, deprecated)
    static func trackingFalseIsAPlainUpdater(scheduler: ManualScheduler) -> (Int, Bool) {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return (1, false) }
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var calls = 0
        context.onUpdate(tracking: false) { _ in calls += 1 }
        context.onUpdate(tracking: true) { _ in calls += 1 }
        // The old spelling requested nothing on registration (onTrackedUpdate does).
        let pendingAfterRegistering = context.isUpdatePending
        context.update()
        return (calls, pendingAfterRegistering)
    }
}

final class DeprecatedAliasTests: XCTestCase {
    private let old: any OldSpellings.Type = Old.self

    func testAnimatedIsAnimatesByDefault() {
        let (first, second) = old.animatedIsAnimatesByDefault()
        XCTAssertTrue(first)
        XCTAssertFalse(second)
    }

    func testStateUpdateIsModify() {
        XCTAssertEqual(old.stateUpdateIsModify(scheduler: ManualScheduler()), ["a", "c"])
    }

    /// `setNeedsUpdate(on:)` kept its lifetime: dropping its result did not stop it (its replacement,
    /// `requestUpdates(from:)`, stops when released).
    func testTheOldSequenceTriggerKeepsItsOldLifetime() {
        let (dropped, pending) = old.droppedSequenceSubscriptionKeepsRunning(scheduler: ManualScheduler())
        XCTAssertTrue(pending, "the dropped subscription still requested")
        XCTAssertNil(dropped, "and nothing else held it")
    }

    func testSchedulerSpellingsAreTheSameObjects() {
        XCTAssertEqual(old.schedulerSpellingsAreTheSameObjects(), [true, true, true, true])
    }

    func testThePassFactory() {
        let context = old.passContextFactory()
        XCTAssertTrue(context.animatesByDefault)
    }

    func testNoneIsInitial() {
        XCTAssertTrue(old.noneIsInitial())
    }

    func testOnUpdateTracking() {
        let (calls, pending) = old.trackingFalseIsAPlainUpdater(scheduler: ManualScheduler())
        XCTAssertEqual(calls, 2)
        XCTAssertFalse(pending)
    }
}
