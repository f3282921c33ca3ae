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
    samples.sort()
    return samples[samples.count / 2]
}

/// The median time per request of a request repeated on a target that is already dirty: `request` once,
/// untimed (it makes the target dirty); `count` more, timed; then `endCycle`, untimed, delivers. The shape
/// of every "request on a dirty …" row. Inlined, so that the timed loop calls `request` directly.
@inline(__always)
func medianRepeatedRequests(
    _ repetitions: Int, count: Int, endCycle: () -> Void = { turnMainRunLoop() }, _ request: () -> Void
) -> Double {
    median(repetitions) {
        request()
        let ns = timed {
            for _ in 0..<count { request() }
        }
        endCycle()
        return (ns, count)
    }
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
