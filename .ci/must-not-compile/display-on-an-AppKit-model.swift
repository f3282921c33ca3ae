// expect: has no member 'display'
// A model object is not a view: `.display` is refused.
import AppKit
import UpdateContext
import UpdateContextCompatibility

final class Model: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    @ViewInvalidating(.display) var color = NSColor.red
}
