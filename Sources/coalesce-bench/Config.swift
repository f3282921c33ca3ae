/// Sizes and repetitions: the full run, or a short one for CI (`--quick`, well under 30 s).
struct Config {
    let quick: Bool

    var repetitions: Int { quick ? 3 : 7 }
    /// Samples of each side of a ratio measured in turns (and fan-out's rounds): more than `repetitions`,
    /// because a sample is short (a few milliseconds) and one that a preemption or a change of the
    /// machine's speed hits moves its pair's ratio.
    var pairedSamples: Int { quick ? 5 : 21 }
    var burstSizes: [Int] { [1, 10, 1_000, 100_000] }
    var fanOutSizes: [Int] { quick ? [1, 100, 1_000, 10_000] : [1, 100, 1_000, 10_000, 100_000] }
    /// Foundation's queue is O(n) per enqueue: one queue holding n senders costs O(n²) per cycle.
    var foundationFanOutCap: Int { quick ? 1_000 : 10_000 }
    /// The seed's shape (one queue per context) leaks every queue and walks them all each turn.
    var seedShapeCap: Int { quick ? 100 : 1_000 }
    var dirtyRequests: Int { quick ? 200_000 : 2_000_000 }
    var crossThreadRequestsPerThread: Int { quick ? 25_000 : 250_000 }
    var memoryContexts: Int { quick ? 20_000 : 100_000 }
    var enqueuePendingSizes: [Int] { [1, 1_000, 100_000] }
    var foundationPendingSizes: [Int] { quick ? [1, 1_000] : [1, 1_000, 10_000] }
}
