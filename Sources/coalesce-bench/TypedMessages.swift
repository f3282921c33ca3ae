import Foundation
import NotificationCoalescing
import UpdateContext

// Foundation's typed messages exist with Swift 6.2's Foundation on Linux and in the Apple 26 SDKs.
#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

/// The subject the benchmark's messages are posted for.
final class BenchSubject: Sendable {}

@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct BenchMessage: NotificationCenter.MainActorMessage {
    typealias Subject = BenchSubject
    var value: Int
}

@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension Bench {
    // MARK: typed messages (BENCHMARK.md: enqueue of a pending message vs a post to one observer)

    mutating func typedMessages() {
        progress("typed message enqueue vs post(_:subject:)")
        let m = config.dirtyRequests / 10
        let subject = BenchSubject()
        let context = NotificationCoalescingContext(label: "coalesce-bench messages", scheduler: .mainRunLoop)
        let coalesced = MainCounter()
        let lastSeen = MainCounter()
        let token = context.center.addObserver(of: subject, for: BenchMessage.self) { message in
            coalesced.value += 1
            lastSeen.value = message.value
        }
        // Foundation's own post, to one observer of its own center: what every post costs without us.
        let center = NotificationCenter()
        let posted = MainCounter()
        let baselineToken = center.addObserver(of: subject, for: BenchMessage.self) { _ in posted.value += 1 }

        var value = 0
        let samples = config.pairedSamples
        let (ours, post, ratio) = interleavedMedianRepeatedRequests(
            samples, count: m,
            {
                value &+= 1
                context.enqueue(BenchMessage(value: value), subject: subject)
            },
            against: { center.post(BenchMessage(value: 0), subject: subject) },
            secondCycleEnd: {})
        let exact = coalesced.value == samples && lastSeen.value == value
        report.checks.append(
            Check(
                name: "typed messages: one post per (type, subject) per cycle, the latest", passed: exact,
                detail:
                    "\(coalesced.value) posts for \(samples) cycles of \(m + 1) enqueues; last value \(lastSeen.value) of \(value)"
            ))
        report.rows.append(
            Row(
                scenario: "typed message enqueue (already pending)", n: m, unit: "ns", ours: ours,
                oursDeliveries: "\(coalesced.value)/\(samples) cycles",
                note: String(
                    format:
                        "Foundation's post(_:subject:) to one observer: %.0f ns per post (%d posts), %.0f× an enqueue",
                    post, posted.value, 1 / ratio)))
        typedMessageAdvantage = 1 / ratio
        context.center.removeObserver(token)
        center.removeObserver(baselineToken)
    }
}
#endif

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    /// The typed-message scenario where the system has the types (Linux with Swift 6.2+, Apple 26 systems);
    /// elsewhere a row that says why it is missing.
    mutating func typedMessagesIfAvailable() {
        #if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            typedMessages()
            return
        }
        #endif
        report.rows.append(
            Row(
                scenario: "typed message enqueue (already pending)", n: 0, unit: "ns", ours: nil,
                oursDeliveries: "–", note: "this system's Foundation has no typed messages (Swift 6.2+ / 26 SDKs)"))
    }
}
