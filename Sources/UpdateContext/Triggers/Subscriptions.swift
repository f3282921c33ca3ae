import CoalescingRuntime
import UpdateContextCore

/// Something a subscription runs — a sequence's task, a message's observer — that ends when cancelled.
package protocol LinkedRunner: Sendable {
    func cancel()
    var isCancelled: Bool { get }
}

extension Task: LinkedRunner where Success == Void, Failure == Never {}

/// A context's running subscriptions (messages, sequences, publishers), kept as a face of its storage: the storage
/// lets go of its faces when the context goes, and this one's `deinit` then cancels what still runs. A
/// subscription registered after that lands on a set that nobody keeps, and is cancelled as its caller lets go.
package final class Subscriptions: Sendable {
    private struct State {
        var runners: [UInt64: any LinkedRunner] = [:]
        var nextKey: UInt64 = 0
        var finished: Set<UInt64> = []
    }

    private let state = Locked(State())

    init() {}

    /// A key for a runner about to start: it may finish before ``register(_:key:)``.
    package func reserveKey() -> UInt64 {
        state.withLock { state in
            state.nextKey += 1
            return state.nextKey
        }
    }

    /// Keeps `runner` until it finishes (a runner that already finished is not kept).
    package func register(_ runner: any LinkedRunner, key: UInt64) {
        state.withLock { state in
            if state.finished.remove(key) == nil { state.runners[key] = runner }
        }
    }

    /// The runner of `key` has ended (any thread).
    package func finished(_ key: UInt64) {
        state.withLock { state in
            if state.runners.removeValue(forKey: key) == nil { state.finished.insert(key) }
        }
    }

    var count: Int { state.withLock { $0.runners.count } }

    deinit {
        // Outside every lock of the package: the storage released its faces, or a caller its unkept set.
        for runner in state.withLock({ $0.runners.values }) { runner.cancel() }
    }
}

extension UpdateStorage {
    /// The context's subscriptions (a new, unkept set once the context is gone).
    package var subscriptions: Subscriptions {
        face(Subscriptions.self) ?? adopt(Subscriptions())
    }

    /// The runner of `key` has ended (any thread): recorded in the context's set, or nowhere once the context
    /// is gone (no set is made for it).
    package func subscriptionFinished(_ key: UInt64) {
        face(Subscriptions.self)?.finished(key)
    }
}
