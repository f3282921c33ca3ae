import Dispatch
import Foundation
import Observation

/// The physical limit: a dirty flag and an array of pending contexts, called once at the flush.
///
/// Written as a library would be (the request is not inlined into the caller), so that it is compared
/// with ours on equal terms.
final class FloorContext {
    var isDirty = false
    let deliver: (Bool) -> Void

    init(_ deliver: @escaping (Bool) -> Void) {
        self.deliver = deliver
    }

    @inline(never)
    func setNeedsUpdate(_ queue: FloorQueue) {
        if !isDirty {
            isDirty = true
            queue.pending.append(self)
        }
    }
}

final class FloorQueue {
    var pending: [FloorContext] = []

    @inline(never)
    func flush() {
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        for context in batch {
            context.isDirty = false
            context.deliver(false)
        }
    }
}

/// What UIKit's automatic tracking does: an `@Observable` property read under
/// `withObservationTracking`; its `onChange` marks the view dirty and schedules one delivery for the next
/// turn, which renders and tracks again.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class ObservedModel {
    var value = 0
}

/// Delivery side of the Observation baseline: tracks, and re-tracks after each delivery.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ObservationView: @unchecked Sendable {
    // @unchecked Sendable: used only on the main thread; `onChange` (a `@Sendable` closure in the API)
    // runs synchronously inside the mutation, which the benchmark makes on the main thread.
    let model = ObservedModel()
    var isDirty = false
    var deliveries = 0
    unowned let scheduler: ObservationScheduler

    init(scheduler: ObservationScheduler) {
        self.scheduler = scheduler
        track()
    }

    func track() {
        withObservationTracking {
            blackHole(model.value)
        } onChange: { [unowned self] in
            if !isDirty {
                isDirty = true
                scheduler.schedule(self)
            }
        }
    }

    func deliver() {
        isDirty = false
        deliveries += 1
        track()
    }
}

/// One run-loop block per cycle for every dirty `ObservationView`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ObservationScheduler: @unchecked Sendable {
    // @unchecked Sendable: main thread only (see ObservationView).
    var pending: [ObservationView] = []

    func schedule(_ view: ObservationView) {
        if pending.isEmpty {
            RunLoop.main.perform { [self] in flush() }
        }
        pending.append(view)
    }

    func flush() {
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        for view in batch { view.deliver() }
    }
}

/// A main-thread-only counter that `@Sendable` closures may capture.
final class MainCounter: @unchecked Sendable {
    // @unchecked Sendable: incremented only on the main thread (Dispatch main-queue blocks and run-loop
    // callbacks, which the benchmark runs there), read there after the run loop has turned.
    var value = 0
}
