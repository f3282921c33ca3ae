// expect: has no member 'configuration'
// `.configuration` is UIKit's (as Apple's): an AppKit view refuses it.
import AppKit
import UpdateContext
import UpdateContextCompatibility

final class BadgeView: NSView {
    @ViewInvalidating(.configuration) var count = 0
}
