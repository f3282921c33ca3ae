import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: 5. memory

    mutating func memory() {
        progress("memory")
        let n = config.memoryContexts
        let before = mallocBytesInUse()
        let rssBefore = residentBytes()
        var contexts: [ViewUpdatingContext] = []
        contexts.reserveCapacity(n)
        let arrayBytes = mallocBytesInUse() - before
        for _ in 0..<n {
            let context = ViewUpdatingContext()
            context.onUpdate { _ in }
            contexts.append(context)
        }
        let idle = Double(mallocBytesInUse() - before - arrayBytes) / Double(n)
        let rssIdle = Double(residentBytes() - rssBefore) / Double(n)
        for context in contexts { context.setNeedsUpdate() }
        let dirtyBytes = Double(mallocBytesInUse() - before - arrayBytes) / Double(n)
        turnMainRunLoop()
        contexts.removeAll()
        turnMainRunLoop()
        let leftover = mallocBytesInUse() - before

        // What a token costs when the caller keeps it (the row above lets it go, as most callers do).
        let tokenBefore = mallocBytesInUse()
        var tokens: [ViewUpdatingContext.ViewUpdater] = []
        tokens.reserveCapacity(n)
        let tokenArray = mallocBytesInUse() - tokenBefore
        let holder = ViewUpdatingContext(refreshEvents: [])
        for _ in 0..<n { tokens.append(holder.onUpdate { _ in }) }
        holder.removeUpdaters()  // what stays is the tokens (and the one context)
        let tokenBytes = Double(mallocBytesInUse() - tokenBefore - tokenArray) / Double(n)
        withExtendedLifetime(tokens) {}

        let floorBefore = mallocBytesInUse()
        var floors: [FloorContext] = []
        floors.reserveCapacity(n)
        let floorArray = mallocBytesInUse() - floorBefore
        for _ in 0..<n { floors.append(FloorContext { _ in }) }
        let floorBytes = Double(mallocBytesInUse() - floorBefore - floorArray) / Double(n)
        withExtendedLifetime(floors) {}

        report.rows.append(
            Row(
                scenario: "memory, idle context (malloc)", n: n, unit: "bytes", ours: idle, floor: floorBytes,
                oursDeliveries: "–", note: String(format: "RSS growth %.0f B/context", rssIdle)))
        report.rows.append(
            Row(
                scenario: "memory, a held updater token (malloc)", n: n, unit: "bytes", ours: tokenBytes,
                oursDeliveries: "–", note: "the token alone, kept after its updater was removed"))
        report.rows.append(
            Row(
                scenario: "memory, dirty context (malloc)", n: n, unit: "bytes", ours: dirtyBytes, oursDeliveries: "–",
                note: "includes the scheduler's pending list"))
        report.checks.append(
            Check(
                name: "memory: released contexts free what they held", passed: leftover < n * 16,
                detail: "\(leftover) bytes still held after releasing \(n) contexts"))
        idleBytes = idle
    }
}
