// expect: call to main actor-isolated instance method 'updateViewIfNeeded(file:line:)' in a synchronous nonisolated context
// updateViewIfNeeded() is @MainActor (like UIKit's updatePropertiesIfNeeded()): calling it off the main actor does
// not compile.
import Dispatch
import UpdateContext

final class Badge: ViewUpdating, @unchecked Sendable {
    let updateContext = ViewUpdatingContext()
    func updateView(animated: Bool) {}
}

func render(_ badge: Badge) {
    DispatchQueue.global().async {
        badge.updateViewIfNeeded()
    }
}
