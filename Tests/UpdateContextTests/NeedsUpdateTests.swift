import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

private final class Profile: ViewUpdating {
    let updateContext: ViewUpdatingContext
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}
    @NeedsUpdate var title = ""
    @NeedsUpdate(animated: true) var progress = 0.0
    @NeedsUpdate(animated: false) var badge = 0
    @NeedsUpdate var tags: [String] = []
    @NeedsUpdate var payload = NotEquatable(value: 0)

    init(scheduler: ManualScheduler) {
        updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    }
}

struct NotEquatable {
    var value: Int
}

/// A main-actor class (a view controller, say) conforms with a plain `let`.
@MainActor
private final class ProfileViewController: ViewUpdating {
    let updateContext: ViewUpdatingContext
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}
    @NeedsUpdate var name = ""
    var rendered: [String] = []

    init(scheduler: ManualScheduler) {
        updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        updateContext.onUpdate { [weak self] _ in
            guard let self else { return }
            rendered.append(name)
        }
    }
}

final class NeedsUpdateTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var profile: Profile!
    private var deliveries: Deliveries!

    override func setUp() {
        scheduler = ManualScheduler()
        profile = Profile(scheduler: scheduler)
        deliveries = Deliveries()
        profile.updateContext.onUpdate { [deliveries] in deliveries!.record($0) }
    }

    func testAnEqualValueRequestsNothing() {
        profile.title = ""
        XCTAssertFalse(profile.updateContext.isUpdatePending)
        profile.title = "Ada"
        XCTAssertTrue(profile.updateContext.isUpdatePending)
        scheduler.turn()
        profile.title = "Ada"
        XCTAssertFalse(profile.updateContext.isUpdatePending)
        XCTAssertEqual(profile.title, "Ada")
        XCTAssertEqual(deliveries.count, 1)
    }

    func testManyChangesInOneCycleDeliverOnce() {
        for i in 0..<100 {
            profile.title = "t\(i)"
            profile.tags.append("x")
        }
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "n")
        XCTAssertEqual(profile.tags.count, 100)
    }

    func testTheAnimatedArgumentBecomesTheRequestsFlag() {
        profile.progress = 0.5
        scheduler.turn()
        profile.badge = 3
        profile.progress = 0.7  // false then true: the non-animated change flushes first
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "ana")
    }

    func testANonEquatableValueRequestsOnEverySet() {
        profile.payload = NotEquatable(value: 0)
        XCTAssertTrue(profile.updateContext.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
        XCTAssertEqual(profile.payload.value, 0)
    }

    func testOnAMainActorClass() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            let controller = ProfileViewController(scheduler: scheduler)
            controller.name = "a"
            controller.name = "b"
            controller.name = "b"
            scheduler.turn()
            XCTAssertEqual(controller.rendered, ["b"])
            controller.name = "b"
            scheduler.turn()
            XCTAssertEqual(controller.rendered, ["b"])
        }
    }
}
