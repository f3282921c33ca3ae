import CMallocStats
import CoreFoundation
import Foundation
import NotificationCoalescing

/// An integer that producer threads add to and the main thread reads: C11 atomics that exist on every
/// supported system (no `Synchronization`, which needs iOS 18 / macOS 15) and that ThreadSanitizer sees.
package final class AtomicCounter: Sendable {
    // The value lives in memory allocated here, at an address that never moves (the atomics need one).
    private nonisolated(unsafe) let storage: UnsafeMutablePointer<Int>

    package init(_ value: Int = 0) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deallocate()
    }

    /// The value (acquire).
    package var value: Int { cvu_counter_load(storage) }

    /// Adds `delta` (acquire-release); returns the new value.
    @discardableResult
    package func add(_ delta: Int = 1) -> Int { cvu_counter_add(storage, delta) }

    /// Sets the value (release).
    package func store(_ value: Int) { cvu_counter_store(storage, value) }
}

/// Counts the main run loop's turns (BeforeWaiting and Exit, in the common modes) with an observer
/// ordered before the library's, so that a delivery can see the number of the turn it happens in.
package final class MainTurnCounter: @unchecked Sendable {
    // @unchecked Sendable: `count` is written by the observer on the main thread and read there; the
    // observer is created and invalidated on the main thread.
    package private(set) var count = 0
    private var observer: CFRunLoopObserver?

    /// Starts counting; call on the main thread.
    package init() {
        let activities = CFRunLoopActivity([.beforeWaiting, .exit]).rawValue
        let observer = CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities, true, 0) {
            [unowned self] _, _ in
            count += 1
        }
        addToMainCommonModes(observer!)
        self.observer = observer
    }

    /// Stops counting (the observer goes).
    package func stop() {
        if let observer { CFRunLoopObserverInvalidate(observer) }
        observer = nil
    }

    deinit {
        stop()
    }
}

/// Runs `body` on a new thread and waits until it has finished: a request "from another thread" that
/// has certainly been made before the test goes on.
package func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    done.wait()
}

/// An object whose deinit runs `action`: a user value that calls back into the library.
package final class CallsBack: @unchecked Sendable {
    // @unchecked Sendable: `action` is immutable; tests decide on which thread the last reference goes.
    private let action: () -> Void
    package init(_ action: @escaping () -> Void) { self.action = action }
    deinit { action() }
}

/// A list of strings any thread may append to: what observers, updaters and completions recorded.
package final class SharedLog: Sendable {
    private let lines = NotificationCoalescing.Locked<[String]>([])

    package init() {}

    package func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    package var entries: [String] { lines.withLock { $0 } }

    package func removeAll() {
        lines.withLock { $0.removeAll() }
    }
}
