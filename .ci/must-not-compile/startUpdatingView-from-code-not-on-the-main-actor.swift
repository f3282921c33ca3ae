// expect: call to main actor-isolated instance method 'startUpdatingView(tracksObservation:file:line:)' in a synchronous nonisolated context
// startUpdatingView() is @MainActor (like UIKit's updatePropertiesIfNeeded()): a nonisolated caller — a plain
// Swift Testing @Test, a background queue's block, a nonisolated method — does not compile.
import UpdateContext

final class Badge: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    var count = 0
    func updateView(animated: Bool) {}

    func start() {
        startUpdatingView()
    }
}
