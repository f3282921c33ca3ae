// What the macOS job's tests of the Combine and SwiftUI layers do, written here (outside the test target)
// so that `apple-typecheck matrix .` type-checks it against the SDKs: XCTest is not in the SDKs, so the
// test files only call these and assert on what they return. Nothing here exists on Linux.
#if canImport(SwiftUI) && canImport(AppKit) && canImport(Combine)
import AppKit
import Combine
import Foundation
import NotificationCoalescing
import SwiftUI
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI

/// Hosts a gated view in an `NSHostingView` and plays a `GateRow` timeline on it with SwiftUI itself:
/// each content evaluation is written as the row writes it.
@MainActor
package final class GateHostProbe {
    /// What the parent's evaluations hand the gated view.
    final class Driver: ObservableObject {
        @Published var version = 0
        @Published var key = 0
        @Published var flag = false
    }

    /// State the gated content observes itself (a change re-evaluates it, gate or not).
    final class Own: ObservableObject {
        @Published var ticks = 0
    }

    /// The evaluations written so far.
    final class Log {
        var entries: [String] = []
    }

    struct Content: View {
        let version: Int
        @ObservedObject var own: Own
        let log: Log
        var body: some View {
            log.entries.append("*\(version)")
            return Text("\(version) \(own.ticks)")
        }
    }

    struct Parent: View {
        let kind: GateKind
        @ObservedObject var driver: Driver
        let own: Own
        let events: PassthroughSubject<Void, Never>
        let log: Log
        var body: some View {
            let content = Content(version: driver.version, own: own, log: log)
            switch kind {
            case .onChange: content.updatesOnly(onChangeOf: driver.key)
            case .whileOpen: content.updatesOnly(while: driver.flag)
            case .onEvent: content.updatesOnly(onReceive: events)
            }
        }
    }

    private let kind: GateKind
    private let driver = Driver()
    private let own = Own()
    private let events = PassthroughSubject<Void, Never>()
    private let log = Log()
    private var window: NSWindow?
    private var host: NSHostingView<Parent>?

    package init(kind: GateKind) {
        self.kind = kind
    }

    /// Plays `timeline` (it starts with a `p`: the view appears with the inputs of that evaluation);
    /// returns, per token, the content evaluations it caused (each version once, in order: SwiftUI may
    /// evaluate a body twice for one update).
    package func play(_ timeline: String) -> String {
        var out: [String] = []
        for token in timeline.split(separator: " ") {
            let before = log.entries.count
            let argument = token.dropFirst()
            switch token.first {
            case "p":
                if argument == "+" || argument == "-" {
                    driver.flag = argument == "+"
                } else if let number = Int(argument) {
                    driver.key = number
                }
                driver.version += 1
            case "e": events.send(())
            case "s": own.ticks += 1
            default: preconditionFailure("unknown token \(token)")
            }
            if host == nil { show() }
            settle()
            out.append(String(token))
            var seen: [String] = []
            for entry in log.entries[before...] where !seen.contains(entry) {
                seen.append(entry)
            }
            out += seen
        }
        return out.joined(separator: " ")
    }

    private func show() {
        let host = NSHostingView(rootView: Parent(kind: kind, driver: driver, own: own, events: events, log: log))
        let window = NSWindow(
            contentRect: NSRect(x: 0, y: 0, width: 200, height: 100), styleMask: [.borderless], backing: .buffered,
            defer: false)
        window.contentView = host
        self.host = host
        self.window = window
    }

    /// Lets SwiftUI apply what changed: a few turns of the main loop and a layout pass.
    private func settle() {
        for _ in 0..<3 {
            RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02))
            host?.layoutSubtreeIfNeeded()
        }
    }
}

/// What ``playDeliveryGate(requestsPerCycle:cycles:)`` saw.
package struct DeliveryGateResult: Equatable, Sendable {
    package var requests: Int
    package var deliveries: Int
    /// Evaluations of the gated content after it appeared.
    package var evaluations: Int
}

/// A view gated on a context's deliveries, hosted, while another thread asks the context for updates
/// `requestsPerCycle` times in each of `cycles` rounds; the main run loop turns between rounds.
@MainActor
package func playDeliveryGate(requestsPerCycle: Int, cycles: Int) -> DeliveryGateResult {
    final class Counter {
        var evaluations = 0
    }
    struct Gated: View {
        let counter: Counter
        var body: some View {
            counter.evaluations += 1
            return Text("\(counter.evaluations)")
        }
    }
    let context = ViewUpdatingContext(refreshEvents: [])
    let deliveries = ThreadSafe(AtomicCounter())
    context.onUpdate { _ in deliveries.value.add() }
    let counter = Counter()
    let host = NSHostingView(rootView: Gated(counter: counter).updatesOnly(onDeliveryOf: context))
    let window = NSWindow(
        contentRect: NSRect(x: 0, y: 0, width: 200, height: 100), styleMask: [.borderless], backing: .buffered,
        defer: false)
    window.contentView = host
    host.layoutSubtreeIfNeeded()
    let appeared = counter.evaluations
    for _ in 0..<cycles {
        onAnotherThread { for _ in 0..<requestsPerCycle { context.setNeedsUpdate() } }
        let target = deliveries.value.value + 1
        let deadline = Date(timeIntervalSinceNow: 10)
        while deliveries.value.value < target && Date() < deadline {
            RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
        }
        for _ in 0..<3 {
            RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
            host.layoutSubtreeIfNeeded()
        }
    }
    _ = window
    return DeliveryGateResult(
        requests: requestsPerCycle * cycles, deliveries: deliveries.value.value,
        evaluations: counter.evaluations - appeared)
}
#endif
