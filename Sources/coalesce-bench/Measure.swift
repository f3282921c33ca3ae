import CMallocStats
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic nanoseconds.
@inline(__always)
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Runs `body` `repetitions` times; returns the median of the per-item times it reports.
///
/// `body` returns (nanoseconds spent in the timed part, items done in it), so that set-up outside the
/// timed part (creating contexts, say) is not counted.
func median(_ repetitions: Int, _ body: () -> (ns: UInt64, items: Int)) -> Double {
    var samples: [Double] = []
    for _ in 0..<max(repetitions, 1) {
        let (ns, items) = body()
        samples.append(Double(ns) / Double(max(items, 1)))
    }
    return middle(samples)
}

/// One sample of a request repeated on a target that is already dirty: `request` once, untimed (it makes
/// the target dirty); `count` more, timed; then `endCycle`, untimed, delivers. Nanoseconds per request.
/// The shape of every "request on a dirty …" row. Inlined, so that the timed loop calls `request` directly.
@inline(__always)
func repeatedRequestSample(count: Int, endCycle: () -> Void, _ request: () -> Void) -> Double {
    request()
    let ns = timed {
        for _ in 0..<count { request() }
    }
    endCycle()
    return Double(ns) / Double(max(count, 1))
}

/// The median of `repetitions` samples of ``repeatedRequestSample(count:endCycle:_:)``.
@inline(__always)
func medianRepeatedRequests(
    _ repetitions: Int, count: Int, endCycle: () -> Void = { turnMainRunLoop() }, _ request: () -> Void
) -> Double {
    var samples: [Double] = []
    for _ in 0..<max(repetitions, 1) {
        samples.append(repeatedRequestSample(count: count, endCycle: endCycle, request))
    }
    return middle(samples)
}

/// Two "request on a dirty …" figures whose ratio is a claim, measured in turns (one sample of each, then
/// the next): both then see the same machine state. Returns each median and the ratio of the pair, the
/// median of the per-turn ratios (``pairedRatio(_:_:)``). This machine's speed changes for seconds at a
/// time; measured one after the other, the dirty request's ratio to the floor read anywhere from 1.0× to
/// 3.5× from one process to the next, as each figure landed in a fast or a slow spell.
@inline(__always)
func interleavedMedianRepeatedRequests(
    _ repetitions: Int, count: Int,
    _ first: () -> Void, against second: () -> Void,
    firstCycleEnd firstEnd: () -> Void = { turnMainRunLoop() },
    secondCycleEnd secondEnd: () -> Void = { turnMainRunLoop() }
) -> (first: Double, second: Double, ratio: Double) {
    var firsts: [Double] = []
    var seconds: [Double] = []
    for _ in 0..<max(repetitions, 1) {
        firsts.append(repeatedRequestSample(count: count, endCycle: firstEnd, first))
        seconds.append(repeatedRequestSample(count: count, endCycle: secondEnd, second))
    }
    return (middle(firsts), middle(seconds), pairedRatio(firsts, seconds))
}

/// The ratio of two figures sampled in pairs (sample `i` of each taken side by side): the median of the
/// pairs' ratios. With a machine that alternates between a fast and a slow state, the ratio of the two
/// medians can take one side's median from each state and read more (or less) than either state's ratio.
func pairedRatio(_ numerators: [Double], _ denominators: [Double]) -> Double {
    middle(zip(numerators, denominators).map { $0 / $1 })
}

/// The median of `samples` (not empty).
func middle(_ samples: [Double]) -> Double {
    samples.sorted()[samples.count / 2]
}

/// Times `body` alone.
@inline(__always)
func timed(_ body: () -> Void) -> UInt64 {
    let start = now()
    body()
    return now() - start
}

/// Keeps a value alive and opaque to the optimizer.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// One turn of the main run loop: a pass that fires `Exit` (where the coalescing observers run) and
/// drains the main dispatch queue, without waiting.
func turnMainRunLoop() {
    _ = RunLoop.main.run(mode: .default, before: Date.distantPast)
}

/// Bytes the process holds in malloc, for memory per context.
func mallocBytesInUse() -> Int {
    Int(malloc_stats_bytes_in_use())
}

/// Resident set size in bytes (Linux), or 0 where it cannot be read.
func residentBytes() -> Int {
    #if os(Linux)
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return 0
    #endif
}

/// Progress on stderr, so that stdout carries only the report.
func progress(_ line: String) {
    FileHandle.standardError.write(Data(("· " + line + "\n").utf8))
}
