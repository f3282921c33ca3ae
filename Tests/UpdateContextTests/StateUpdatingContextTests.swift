import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// `StateUpdatingContext`.
final class StateUpdatingContextTests: XCTestCase {
    struct Screen: Equatable {
        var title = ""
        var count = 0
    }

    private var scheduler: ManualScheduler!
    private var view: StateUpdatingContext<Screen>!
    private var renders: [(state: Screen, old: Screen?, animated: Bool)] = []

    override func setUp() {
        scheduler = ManualScheduler()
        view = StateUpdatingContext(state: Screen(), scheduler: scheduler)
        renders = []
        view.onRender { [unowned self] state, old, animated in renders.append((state, old, animated)) }
    }

    func testManyChangesOneRenderWithTheStateAtFlushTime() {
        view.modify { $0.title = "a" }
        view.modify { $0.count += 1 }
        view.state.count += 1
        XCTAssertEqual(renders.count, 0)
        scheduler.turn()
        XCTAssertEqual(renders.count, 1)
        XCTAssertEqual(renders[0].state, Screen(title: "a", count: 2))
        XCTAssertNil(renders[0].old, "nothing was rendered before")
    }

    func testOldStateIsTheLastRenderedState() {
        view.state = Screen(title: "one", count: 1)
        scheduler.turn()
        view.state = Screen(title: "two", count: 2)
        view.state = Screen(title: "three", count: 3)
        scheduler.turn()
        XCTAssertEqual(renders.map(\.state.title), ["one", "three"])
        XCTAssertEqual(renders[1].old, Screen(title: "one", count: 1), "not the intermediate state")
    }

    func testAnEqualValueRequestsNothing() {
        scheduler.turn()  // the renderer's first render
        XCTAssertEqual(renders.count, 1)
        view.state = Screen()
        view.modify { $0.title = "" }
        XCTAssertFalse(view.context.isUpdatePending)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testChangesThatCancelOutWithinACycleRenderNothing() {
        view.state.title = "shown"
        scheduler.turn()
        view.state.title = "changed"
        view.state.title = "shown"
        scheduler.turn()
        XCTAssertEqual(renders.count, 1)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testAForcedUpdateRendersAnUnchangedStateWithTheLastRenderedAsOldState() {
        view.state.title = "shown"
        scheduler.turn()
        view.context.update()
        XCTAssertEqual(renders.count, 2, "update() renders even when nothing changed")
        XCTAssertEqual(renders[1].state, Screen(title: "shown"))
        XCTAssertEqual(renders[1].old, Screen(title: "shown"), "oldState is the last rendered state")
        view.context.update(animated: true)
        XCTAssertEqual(renders.map(\.animated), [false, false, true])
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testTheLifecycleRefreshRendersAnUnchangedState() {
        let event = Notification.Name("StateUpdatingContextTests.foreground")
        let center = NotificationCenter.default
        let refreshing = StateUpdatingContext(state: Screen(title: "x"), scheduler: scheduler, refreshEvents: [event])
        var rendered: [Screen?] = []
        refreshing.onRender { _, old, _ in rendered.append(old) }
        scheduler.turn()
        XCTAssertEqual(rendered, [nil])
        center.post(name: event, object: nil)
        XCTAssertEqual(rendered, [nil, Screen(title: "x")], "the refresh renders at once, on this thread")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testRemovingTheContextsUpdatersCannotBreakTheRendering() {
        view.state.count = 1
        scheduler.turn()
        view.context.removeUpdaters()
        var later: [(Screen, Screen?)] = []
        view.onRender { state, old, _ in later.append((state, old)) }
        scheduler.turn()
        XCTAssertEqual(later.map(\.0), [Screen(count: 1)], "a new renderer renders the current state")
        view.state.count = 2
        scheduler.turn()
        XCTAssertEqual(later.map(\.0), [Screen(count: 1), Screen(count: 2)], "and every later state, not a stale one")
        XCTAssertEqual(later.last?.1, Screen(count: 1))
        XCTAssertEqual(renders.count, 1, "the removed renderer never runs again")
    }

    func testARendererAddedLaterSeesTheCurrentStateAtTheEndOfTheCycle() {
        view.state.count = 7
        scheduler.turn()
        var late: [(Screen, Screen?)] = []
        view.onRender { state, old, _ in late.append((state, old)) }
        XCTAssertTrue(view.context.isUpdatePending, "registering asks for a render")
        scheduler.turn()
        XCTAssertEqual(late.count, 1)
        XCTAssertEqual(late.first?.0, Screen(count: 7))
        XCTAssertNil(late.first?.1)
        XCTAssertEqual(renders.count, 1, "a renderer that is up to date does not render again")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testTheStateCanBeReadInsideAnUpdateBody() {
        var seen: Screen?
        view.modify { state in
            seen = self.view.state  // used to deadlock: the body ran under the state's lock
            state.count = 3
        }
        XCTAssertEqual(seen, Screen())
        XCTAssertEqual(view.state.count, 3)
    }

    func testEqualityRunsOutsideTheLock() {
        let probe = ReentrantEquality.Probe()
        let reentrant = StateUpdatingContext(state: ReentrantEquality(value: 0, probe: probe), scheduler: scheduler)
        probe.read = { _ = reentrant.state }  // == reads the state: deadlocked when == ran under the lock
        reentrant.modify { $0.value = 1 }
        XCTAssertEqual(reentrant.state.value, 1)
        XCTAssertGreaterThan(probe.comparisons, 0)
        probe.read = nil
    }

    func testConcurrentUpdatesFromManyThreadsLoseNothing() {
        let threads = 4
        let perThread = 500
        let group = DispatchGroup()
        let shared = view!
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<perThread { shared.modify { $0.count += 1 } }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(view.state.count, threads * perThread, "a body that raced another ran again")
        scheduler.turn()
        XCTAssertEqual(renders.count, 1)
    }

    func testAnimatedFlagReachesTheRenderer() {
        view.modify(animated: true) { $0.count = 5 }
        scheduler.turn()
        XCTAssertEqual(renders.map(\.animated), [true])
    }

    func testEveryRendererGetsTheSameFrame() {
        var second: [Screen] = []
        let token = view.onRender { state, _, _ in second.append(state) }
        view.state.count = 1
        scheduler.turn()
        XCTAssertEqual(second, [Screen(title: "", count: 1)])
        XCTAssertEqual(renders.count, 1)
        token.remove()
        view.state.count = 2
        scheduler.turn()
        XCTAssertEqual(second.count, 1)
        XCTAssertEqual(renders.count, 2)
    }

    func testReleasedIsFreed() {
        weak var weakView: StateUpdatingContext<Screen>?
        var calls = 0
        do {
            let view = StateUpdatingContext(state: Screen(), scheduler: scheduler)
            view.onRender { _, _, _ in calls += 1 }
            view.state.count = 1
            weakView = view
        }
        XCTAssertNil(weakView)
        scheduler.turn()
        XCTAssertEqual(calls, 0)
    }
}

/// A state whose `==` reads the context it lives in (through `probe.read`).
struct ReentrantEquality: Equatable, @unchecked Sendable {
    // @unchecked Sendable: the probe is used by one test on one thread.
    final class Probe {
        var read: (() -> Void)?
        var comparisons = 0
    }

    var value: Int
    let probe: Probe

    static func == (lhs: ReentrantEquality, rhs: ReentrantEquality) -> Bool {
        lhs.probe.comparisons += 1
        lhs.probe.read?()
        return lhs.value == rhs.value
    }
}
