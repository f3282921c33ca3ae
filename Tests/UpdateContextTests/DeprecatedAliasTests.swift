import Foundation
import UpdateContext
import XCTest

/// The one deprecated alias left since 0.2.0, the seed gist's own `animated` (its client code compiles
/// unchanged), behaves as the name it was renamed to. The call lives in a deprecated witness reached through
/// a protocol, so that this target still builds with warnings as errors; `.ci/check-old-code` checks that
/// the gist's code compiles.
private protocol OldSpellings {
    static func animatedIsAnimatesByDefault() -> (Bool, Bool)
}

private enum Old: OldSpellings {
    @available(*, deprecated)
    static func animatedIsAnimatesByDefault() -> (Bool, Bool) {
        let context = ViewUpdatingContext(refreshEvents: [])
        context.animated = true
        let first = context.animatesByDefault
        context.animatesByDefault = false
        return (first, context.animated)
    }
}

final class DeprecatedAliasTests: XCTestCase {
    private let old: any OldSpellings.Type = Old.self

    func testAnimatedIsAnimatesByDefault() {
        let (first, second) = old.animatedIsAnimatesByDefault()
        XCTAssertTrue(first)
        XCTAssertFalse(second)
    }
}
