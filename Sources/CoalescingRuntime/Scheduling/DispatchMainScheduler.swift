import Dispatch
import Foundation

/// Delivers coalesced work in one block on `DispatchQueue.main`.
///
/// Use it in programs whose main thread runs `dispatchMain()` or an `async` main: on Linux no run
/// loop turns there, so a ``RunLoopScheduler`` would never deliver. One block is queued per batch, no
/// matter how much work is scheduled before it runs. Work scheduled while the block runs goes to the
/// next block.
///
/// > Important: Dispatch has no run-loop modes: a turn here admits every mode, so `forModes` is
/// > ignored, and a `.now` notification always posts. Deliveries run on the main queue (the main
/// > actor), which under `dispatchMain()` may be a thread other than the process's first thread.
public final class DispatchMainScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: no stored state beyond the base class's locked queue.

    /// The one instance (the main queue is process-wide): ``CoalescingScheduler/dispatchMain``.
    static let sharedScheduler = DispatchMainScheduler()

    private static let marker = DispatchSpecificKey<Bool>()

    private init() {
        DispatchQueue.main.setSpecific(key: Self.marker, value: true)
        super.init(
            label: DiagnosticLabel("dispatch main", file: #fileID, line: #line), turnThread: .mainAndOthers)
    }

    /// True inside any block the main queue runs, and on the main thread.
    public override var isCurrent: Bool {
        // The queue marker first: under `dispatchMain()` main-queue blocks run on other threads, and the
        // first thread has exited. The main-thread check covers code running on the main thread outside
        // a main-queue block.
        DispatchQueue.getSpecific(key: Self.marker) == true || ThreadIdentity.isMainThread
    }

    /// Whether the caller runs inside a block of the main queue (on whatever thread runs it). Any thread.
    package static var isInMainQueueBlock: Bool {
        _ = sharedScheduler  // installs the marker on the main queue
        return DispatchQueue.getSpecific(key: marker) == true
    }

    public override func requestTurn(insideTurn: Bool) {
        DispatchQueue.main.async { [self] in
            runTurn(mode: nil, isCommonMode: true)
        }
    }
}
