// What the macOS job's tests of the Combine and SwiftUI layers do, written here (outside the test target)
// so that `apple-typecheck matrix .` type-checks it against the SDKs: XCTest is not in the SDKs, so the
// test files only call these and assert on what they return. Nothing here exists on Linux.
#if canImport(AppKit)
import AppKit
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI

/// What ``playAppKitInvalidations()`` saw on real AppKit views.
package struct AppKitInvalidationsResult: Equatable, Sendable {
    package var needsLayoutAfterSet = false
    package var needsDisplayAfterSet = false
    package var needsLayoutAfterEqualSet = true
    package var callbacks = 0
    package var customCalls = 0
    package var deliveries: [Bool] = []
}

/// Sets `@ViewInvalidating` properties of AppKit views and reads what AppKit says (main thread).
@MainActor
package func playAppKitInvalidations() -> AppKitInvalidationsResult {
    final class Count: @unchecked Sendable {
        // @unchecked Sendable: main thread only.
        var value = 0
    }
    struct Custom: ViewInvalidation {
        let count: Count
        func invalidate(view: NSView) { count.value += 1 }
    }
    final class Probe: NSView, ViewUpdating, ViewInvalidationObserving {
        static let customCount = Count()
        let updateContext = ViewUpdatingContext(scheduler: ManualScheduler(), refreshEvents: [])
        var callbacks = 0
        @ViewInvalidating(.layout) var gap: CGFloat = 0
        func updateView(animated: Bool) {}
        @ViewInvalidating(.display, Custom(count: Probe.customCount), .update(animated: true)) var color = 0

        func invalidate(view: NSView) { callbacks += 1 }
    }
    var result = AppKitInvalidationsResult()
    let view = Probe(frame: NSRect(x: 0, y: 0, width: 10, height: 10))
    view.updateContext.onUpdate { result.deliveries.append($0) }
    view.needsLayout = false
    view.gap = 4
    result.needsLayoutAfterSet = view.needsLayout
    view.needsLayout = false
    view.gap = 4
    result.needsLayoutAfterEqualSet = view.needsLayout
    view.needsDisplay = false
    view.color = 1
    result.needsDisplayAfterSet = view.needsDisplay
    result.callbacks = view.callbacks
    result.customCalls = Probe.customCount.value
    view.updateContext.update()
    return result
}
#endif
