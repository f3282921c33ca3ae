// Code written against the API before the adoptable-surface renames (0.1.0): it must still compile, with
// one deprecation warning (and fix-it) per renamed name. Each `expect-warning:` line below must appear.
// expect-warning: 'animated' is deprecated: renamed to 'animatesByDefault'
// expect-warning: 'update(animated:_:)' is deprecated: renamed to 'modify(animated:_:)'
// expect-warning: 'setNeedsUpdate(on:animated:)' is deprecated
// expect-warning: 'onUpdate(tracking:_:)' is deprecated: use onTrackedUpdate(_:)
// expect-warning: 'main' is deprecated: renamed to 'mainRunLoop'
// expect-warning: 'current' is deprecated: renamed to 'currentRunLoop'
// expect-warning: 'shared' is deprecated: renamed to 'dispatchMain'
// expect-warning: 'main' is deprecated: renamed to 'framePaced'
// expect-warning: 'forUpdatePropertiesPass(animated:refreshEvents:)' is deprecated: renamed to 'makeForUpdatePropertiesPass(animated:refreshEvents:)'
// expect-warning: deprecated default implementation is used to satisfy instance method 'updateView(animated:)'
import Foundation
import NotificationCoalescing
import UpdateContext

final class OldStyleController: ViewUpdating {
    let updateContext = ViewUpdatingContext(animated: false, scheduler: RunLoopScheduler.main)
    @NeedsUpdate var title = ""
}

struct Screen: Equatable { var title = "" }

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
func oldCode() {
    let context = ViewUpdatingContext(animated: true)
    context.animated = false
    context.onUpdate(tracking: true) { _ in }
    let (stream, _) = AsyncStream.makeStream(of: Int.self)
    context.setNeedsUpdate(on: stream)
    let state = StateUpdatingContext(state: Screen())
    state.update { $0.title = "x" }
    _ = RunLoopScheduler.current
    _ = DispatchMainScheduler.shared
    _ = FramePacedScheduler.main
    _ = ViewUpdatingContext.forUpdatePropertiesPass()
}
