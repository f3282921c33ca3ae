import Foundation
import NotificationCoalescing
import UpdateContext
import XCTest

/// `ViewUpdatingContext.ViewUpdater`: a handle to one updater, the same wherever it is kept.
final class ViewUpdaterTokenTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    private var calls = 0

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        calls = 0
    }

    func testIsActiveUntilRemovedByItsTokenByRemoveUpdatersOrWithTheContext() {
        let first = context.onUpdate { [unowned self] _ in calls += 1 }
        let second = context.onUpdate { [unowned self] _ in calls += 1 }
        XCTAssertTrue(first.isActive)
        first.remove()
        XCTAssertFalse(first.isActive)
        XCTAssertTrue(second.isActive)
        context.removeUpdaters()
        XCTAssertFalse(second.isActive, "removeUpdaters() removes what the token stands for")

        let third = context.onUpdate { _ in }
        XCTAssertTrue(third.isActive)
        context = nil
        XCTAssertFalse(third.isActive, "a token whose context is gone is not active")
        third.remove()  // harmless
    }

    /// A handle, not a lifetime: dropping the token leaves the updater registered; keeping it in a set or
    /// an array changes nothing either.
    func testTheSameWhereverItIsKept() {
        context.onUpdate { [unowned self] _ in calls += 1 }  // dropped
        var kept: Set<ViewUpdatingContext.ViewUpdater> = [context.onUpdate { [unowned self] _ in calls += 1 }]
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(calls, 2)
        kept.removeAll()  // releasing a token does not remove its updater
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(calls, 4)
        XCTAssertEqual(context.updaterCount, 2)
    }

    func testHashableByIdentityAndDescribed() {
        let token = context.onUpdate { _ in }
        let other = context.onUpdate { _ in }
        XCTAssertEqual(token, token)
        XCTAssertNotEqual(token, other)
        XCTAssertEqual(Set([token, token, other]).count, 2)
        XCTAssertTrue("\(token)".hasPrefix("ViewUpdater("))
        token.remove()
        XCTAssertTrue("\(token)".hasSuffix("removed)"))
    }

    /// Many threads remove the same token and others at once: each updater is removed exactly once, and
    /// nothing else is disturbed.
    func testConcurrentRemovalsAreIdempotent() {
        let tokens = (0..<64).map { _ in context.onUpdate { _ in } }
        let survivors = (0..<8).map { _ in context.onUpdate { [unowned self] _ in calls += 1 } }
        DispatchQueue.concurrentPerform(iterations: 256) { index in
            tokens[index % tokens.count].remove()
            _ = tokens[(index * 7) % tokens.count].isActive
        }
        XCTAssertTrue(tokens.allSatisfy { !$0.isActive })
        XCTAssertEqual(context.updaterCount, survivors.count)
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(calls, survivors.count)
    }
}
