#if canImport(Observation)
import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import UpdateContext
@testable import UpdateContextCore
@testable import CoalescingRuntime
import UpdateContextCompatibility
import UpdateContextSwiftUI

/// The `@Observable` faces of contexts, on every platform that has Observation (the `ObservableObject`
/// faces are the same feed with Combine's publisher: tested by the macOS job). A face must change once
/// per delivery — never per request, never without a delivery — and say what the delivery was.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ObservableFacesTests: XCTestCase {
    /// Counts the changes of `read`'s observed properties. Observation reports one change per
    /// registration: ``arm()`` registers again when the last registration has reported (arming twice
    /// would count one change twice).
    final class ChangeCounter: @unchecked Sendable {
        // @unchecked Sendable: the count and the armed flag are atomic; `read` runs on the arming thread.
        let changes = AtomicCounter()
        private let armed = AtomicCounter()
        private let read: () -> Void
        init(_ read: @escaping () -> Void) { self.read = read }
        func arm() {
            guard armed.value == 0 else { return }
            armed.store(1)
            withObservationTracking(read) { [changes, armed] in
                armed.store(0)
                changes.add()
            }
        }
    }

    func testTheFaceChangesOncePerDeliveryHoweverManyRequestsAndThreads() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let face = context.observableDelivery
        let counter = ChangeCounter { _ = face.delivery }
        for cycle in 1...3 {
            counter.arm()
            for _ in 0..<1_000 { context.setNeedsUpdate() }
            onAnotherThread { for _ in 0..<1_000 { context.setNeedsUpdate() } }
            XCTAssertEqual(counter.changes.value, cycle - 1, "nothing before the end of the cycle")
            try scheduler.runUntilIdle()
            XCTAssertEqual(counter.changes.value, cycle)
            XCTAssertEqual(face.delivery.number, UInt64(cycle))
            XCTAssertFalse(face.delivery.isForced)
        }
        try scheduler.runUntilIdle()
        XCTAssertEqual(counter.changes.value, 3, "no delivery, no change")
    }

    /// Every row of the precedence table: the face announces exactly the deliveries the updaters get,
    /// with their flags, numbered 1, 2, 3…
    func testWhatTheFaceAnnouncesIsWhatThePrecedenceTableDelivers() {
        for row in PrecedenceTable.contract + PrecedenceTable.more {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(animated: row.defaultAnimated, scheduler: scheduler, refreshEvents: [])
            var delivered = ""
            context.onUpdate { delivered += $0 ? "a" : "n" }
            let face = context.observableDelivery
            let counter = ChangeCounter { _ = face.delivery }
            var announced = ""
            var numbers: [UInt64] = []
            for token in row.timeline.split(separator: " ") {
                let before = counter.changes.value
                counter.arm()
                playPrecedenceToken(token, on: context, scheduler: scheduler)
                let changes = counter.changes.value - before
                XCTAssertLessThanOrEqual(changes, 1, "\(row): one token, one delivery at most")
                if changes == 1 {
                    announced += face.delivery.animated ? "a" : "n"
                    numbers.append(face.delivery.number)
                }
            }
            XCTAssertEqual(announced, row.expectedDeliveries, "\(row)")
            XCTAssertEqual(delivered, row.expectedDeliveries, "\(row): updaters")
            XCTAssertEqual(numbers, numbers.indices.map { UInt64($0 + 1) }, "\(row)")
        }
    }

    func testAForcedDeliveryIsAnnouncedAsForced() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let face = context.observableDelivery
        context.update(animated: true)
        XCTAssertEqual(face.delivery, ContextDelivery(number: 1, animated: true, isForced: true))
        context.setNeedsUpdate()
        try scheduler.runUntilIdle()
        XCTAssertEqual(face.delivery, ContextDelivery(number: 2, animated: false, isForced: false))
        XCTAssertEqual(face.delivery.description, "delivery 2 (not animated)")
        XCTAssertEqual(ContextDelivery.initial.description, "no delivery")
    }

    /// `delivery` and `state` may be read from any thread (TSan checks the reads against the main thread's
    /// writes).
    func testTheFacesMayBeReadFromAnotherThreadWhileTheMainThreadDelivers() throws {
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        let delivery = view.context.observableDelivery
        let state = view.observableState
        let stop = AtomicCounter()
        let reads = AtomicCounter()
        let reader = Thread {
            while stop.value == 0 {
                let number = delivery.delivery.number
                let seen = state.state
                if number <= 500 && seen <= 500 { reads.add() }
            }
        }
        reader.start()
        for value in 1...500 {
            view.state = value
            try scheduler.runUntilIdle()
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while reads.value == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        stop.store(1)
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        XCTAssertEqual(delivery.delivery.number, 500)
        XCTAssertEqual(state.state, 500)
        XCTAssertGreaterThan(reads.value, 0)
    }

    func testASuspendedContextsFaceStaysQuietUntilResume() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let face = context.observableDelivery
        let counter = ChangeCounter { _ = face.delivery }
        counter.arm()
        context.suspend()
        context.setNeedsUpdate()
        try scheduler.runUntilIdle()
        XCTAssertEqual(counter.changes.value, 0)
        context.resume()
        XCTAssertEqual(counter.changes.value, 1)
        XCTAssertEqual(face.delivery.number, 1)
    }

    func testAContextHasOneFaceThatAsksForNothingAndCostsOneUpdater() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let face = context.observableDelivery
        XCTAssertTrue(face === context.observableDelivery)
        XCTAssertEqual(context.updaterCount, 1)
        XCTAssertFalse(context.isUpdatePending, "making the face requests no delivery")
        XCTAssertEqual(face.delivery, .initial)
    }

    func testThreadsRacingForTheFaceGetOneAndLeaveOneUpdater() {
        for _ in 0..<50 {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let faces = NotificationCoalescing.Locked([ObjectIdentifier]())
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let face = context.observableDelivery
                faces.withLock { $0.append(ObjectIdentifier(face)) }
            }
            let seen = faces.withLock { $0 }
            XCTAssertEqual(Set(seen).count, 1)
            XCTAssertEqual(context.updaterCount, 1, "the losers' updaters are gone")
        }
    }

    func testTheFaceDoesNotKeepItsContextAndGoesWithIt() throws {
        let scheduler = ManualScheduler()
        var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        weak var weakContext: ViewUpdatingContext?
        weakContext = context
        weak var weakFace: ObservableDelivery?
        var held: ObservableDelivery? = context!.observableDelivery
        weakFace = held
        context!.setNeedsUpdate()
        context = nil
        XCTAssertNil(weakContext, "the face does not keep the context")
        try scheduler.runUntilIdle()
        XCTAssertEqual(held!.delivery, .initial, "a released context delivers nothing")
        held = nil
        XCTAssertNil(weakFace, "the context kept the face, and no more")
    }

    func testAFaceAskedOfAReleasedContextsStorageIsNotKept() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let storage = context.storage
        storage.cancel()  // what the context's deinit does
        weak var weakFace: ObservableDelivery?
        weakFace = context.observableDelivery
        XCTAssertNil(weakFace)
    }

    /// A client that asks for an update from the face's change notification (inside the delivery) gets
    /// one more delivery in the next cycle, never a recursive one.
    func testARequestFromTheChangeNotificationIsDeliveredInTheNextCycle() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let face = context.observableDelivery
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        nonisolated(unsafe) var asked = false
        withObservationTracking {
            _ = face.delivery
        } onChange: {
            if !asked {
                asked = true
                context.setNeedsUpdate()
            }
        }
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(deliveries, 1)
        XCTAssertTrue(context.isUpdatePending)
        try scheduler.runUntilIdle()
        XCTAssertEqual(deliveries, 2)
        XCTAssertEqual(face.delivery.number, 2)
    }

    // MARK: StateUpdatingContext

    func testTheStateFaceChangesOncePerRenderWithTheRenderedState() throws {
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        let face = view.observableState
        XCTAssertTrue(face === view.observableState)
        XCTAssertEqual(face.state, 0)
        XCTAssertFalse(view.context.isUpdatePending, "making the face requests no render")
        let counter = ChangeCounter { _ = face.state }
        counter.arm()
        for value in 1...1_000 { view.state = value }
        onAnotherThread { view.state = 2_000 }
        try scheduler.runUntilIdle()
        XCTAssertEqual(counter.changes.value, 1)
        XCTAssertEqual(face.state, 2_000)
        XCTAssertEqual(face.delivery.number, 1)

        counter.arm()
        view.state = 5
        view.state = 2_000  // cancels out
        try scheduler.runUntilIdle()
        XCTAssertEqual(counter.changes.value, 1, "a cycle whose changes cancel out renders nothing")

        view.context.update()  // forced: renders an unchanged state
        XCTAssertEqual(counter.changes.value, 2)
        XCTAssertTrue(face.delivery.isForced)
    }

    /// F then T: the early, non-animated render shows the state before the animated change; the end of
    /// the cycle shows the rest, animated.
    func testTheStateFaceFollowsTheEarlyFlushOfNonAnimatedChanges() throws {
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        let face = view.observableState
        var seen: [(Int, Bool)] = []
        let counter = ChangeCounter { _ = face.state }
        counter.arm()
        view.modify(animated: false) { $0 = 1 }
        view.modify(animated: true) { $0 = 2 }
        XCTAssertEqual(counter.changes.value, 1)
        seen.append((face.state, face.delivery.animated))
        counter.arm()
        try scheduler.runUntilIdle()
        XCTAssertEqual(counter.changes.value, 2)
        seen.append((face.state, face.delivery.animated))
        XCTAssertEqual(seen.map(\.0), [1, 2])
        XCTAssertEqual(seen.map(\.1), [false, true])
    }

    func testTheStateFaceGoesWithItsContext() {
        let scheduler = ManualScheduler()
        var view: StateUpdatingContext<Int>? = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        weak var weakFace: ObservableRenderedState<Int>?
        weakFace = view!.observableState
        weak var weakView: StateUpdatingContext<Int>?
        weakView = view
        XCTAssertNotNil(weakFace)
        view = nil
        XCTAssertNil(weakView)
        XCTAssertNil(weakFace)
    }

    /// The state's `==` and deinit may call back into the context and read the face while it renders.
    func testUserCodeInTheStateMayUseTheFaceAndTheContextWhileItRenders() throws {
        struct Probe: Equatable, Sendable {
            var value: Int
            nonisolated(unsafe) static var onCompare: (() -> Void)?
            static func == (lhs: Probe, rhs: Probe) -> Bool {
                onCompare?()
                return lhs.value == rhs.value
            }
        }
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: Probe(value: 0), scheduler: scheduler, refreshEvents: [])
        let face = view.observableState
        var reads = 0
        Probe.onCompare = {
            reads += 1
            _ = face.state
            _ = face.delivery
            _ = view.context.isUpdatePending
        }
        defer { Probe.onCompare = nil }
        view.state = Probe(value: 1)
        try scheduler.runUntilIdle()
        XCTAssertEqual(face.state.value, 1)
        XCTAssertGreaterThan(reads, 0)
    }
}
#endif
