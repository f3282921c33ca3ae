import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// An `@Observable` cell whose write can stall between Observation's `willSet` (which reports the change) and
/// the store, until a semaphore the test holds is signalled: a writer preempted at the worst moment.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class StallableCell: Observable, @unchecked Sendable {
    // @unchecked Sendable: `stored` is behind `lock`; the registrar is thread-safe.
    private let registrar = ObservationRegistrar()
    private let lock = NSLock()
    private var stored = 0

    var value: Int {
        get {
            registrar.access(self, keyPath: \.value)
            return lock.withLock { stored }
        }
        set { write(newValue, stallingUntil: nil) }
    }

    /// Writes `newValue`; with `gate`, signals `reported` after the `willSet` and waits for `gate` before the store.
    func write(_ newValue: Int, stallingUntil gate: DispatchSemaphore?, reported: DispatchSemaphore? = nil) {
        registrar.withMutation(of: self, keyPath: \.value) {
            reported?.signal()
            gate?.wait()
            lock.withLock { stored = newValue }
        }
    }
}

/// Observation first, searched: seeded random sequences of tracked changes — on the main thread, in animated
/// scopes opened after plain changes, from other threads (some stalling between `willSet` and the store until a
/// later step), from tasks that outlive their scope — updaters that write back, parents that show a tracked
/// child inside their own delivery (`update()`, `updateIfNeeded()`; once to three times, maybe dropping it there),
/// one-shot screens that remove themselves in
/// a delivery, and removal, replacement and release of tracked updaters at random points. Checked against
/// invariants: at every quiet point (no writer stalled, no task running), the contexts settle (no endless
/// loop), no screen that writes nothing is reported for an update loop, and every connected screen and child
/// shows its models' values — or the `trackedChangeOffMainThread` report fired for it, and a request then
/// shows them; every scope's completion is told exactly once, and a task's scope whose change a connected
/// screen read is told it was shown; a removed or released updater is never called again, requests nothing
/// (from the turn it removed itself in, and once settled), and leaves nothing on the models. `RANDOM_SEED=… swift test --filter ObservationRandomTests` replays a seed.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ObservationRandomTests: XCTestCase {
    /// A screen reading one or two shared cells; maybe writing back into the first.
    final class Screen: ViewUpdating, @unchecked Sendable {
        // @unchecked Sendable: updateView runs on the main thread; the test reads it there.
        let updateContext: ViewUpdatingContext
        let cells: [StallableCell]
        let writesBack: Bool
        var shown: [Int] = []
        var deliveries = 0
        var callsAfterRemoval = 0
        var removed = false
        let name: String
        /// A screen shown inside this one's delivery, at once (`update()`) or if pending (`updateIfNeeded()`):
        /// Observation merges what it read into this one's tracking.
        var child: Screen?
        var rendersChildAtOnce = true
        /// How many times each delivery shows the child (a card shown after each of its properties is set).
        var childRenders = 1
        /// Drops (and so releases) the child inside its delivery number `dropsChildAt` (a cell going away).
        var dropsChildAt: Int?
        /// The child is started inside this screen's first delivery (a child screen made while rendering), not
        /// before: its first render runs inside this screen's tracked run.
        var startsChildInside = false
        /// The links of children dropped inside a delivery, for the end's check that nothing is kept.
        var droppedChildLinks: [() -> UpdateStorage?] = []
        /// This screen's link, its child's and its dropped children's: what the cells must not keep once it goes.
        var links: [() -> UpdateStorage?] {
            let own = updateContext.storage
            let child = self.child?.updateContext.storage
            return droppedChildLinks + [{ [weak own] in own }, { [weak child] in child }]
        }
        /// Removes its updater from inside its delivery number `removesItselfAt` (a one-shot screen).
        var removesItselfAt: Int?
        var removedItself = false

        init(name: String, scheduler: ManualScheduler, cells: [StallableCell], writesBack: Bool) {
            self.name = name
            updateContext = ViewUpdatingContext(label: name, scheduler: scheduler, refreshEvents: [])
            self.cells = cells
            self.writesBack = writesBack
        }

        func updateView(animated: Bool) {
            if removed { callsAfterRemoval += 1 }
            deliveries += 1
            shown = cells.map(\.value)
            if startsChildInside, let child {
                startsChildInside = false
                child.startUpdatingView()
            }
            if let child {
                for render in 0..<childRenders {
                    if rendersChildAtOnce {
                        child.updateContext.update()
                    } else {
                        if render > 0 { child.updateContext.setNeedsUpdate() }
                        child.updateContext.updateIfNeeded()
                    }
                }
                if deliveries == dropsChildAt {
                    let link = child.updateContext.storage
                    droppedChildLinks.append { [weak link] in link }
                    self.child = nil
                }
            }
            if deliveries == removesItselfAt {
                updateContext.removeUpdaters()
                removedItself = true
                return
            }
            // A bounded write-back: an odd value in the first cell is made even (shown again, then stable).
            if writesBack, let first = cells.first, first.value % 2 != 0 { first.value += 1 }
        }
    }

    func testRandomObservationRoutesEndShowingTheModel() {
        for seed in randomSeeds(fixed: [1, 2, 3, 4, 5]) {
            run(seed: seed, steps: 300)
        }
    }

    // swiftlint:disable:next function_body_length
    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = ManualScheduler()
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        let cells = (0..<3).map { _ in StallableCell() }
        var screens: [Screen] = []
        var removedScreens: [Screen] = []
        var nextName = 0
        var nextValue = 100
        /// Writers stalled between willSet and the store, each released at a later step.
        var stalled: [(gate: DispatchSemaphore, done: DispatchSemaphore)] = []
        /// Tasks created in scopes that have not ended: each waits for its semaphore.
        var tasks: [(id: Int, go: DispatchSemaphore, ended: AtomicCounter)] = []
        let completions = SharedLog()
        var scopesOpened = 0
        var links: [() -> UpdateStorage?] = []
        var log: [String] = []
        /// For a task's scope: the connected screens that read the cell the task changed, when it changed it
        /// (forgotten as each is removed or released). A scope with one left at the end was shown.
        var watchers: [Int: Set<String>] = [:]
        var taskCells: [Int: StallableCell] = [:]
        func forget(_ screen: Screen) {
            for id in watchers.keys { watchers[id]?.remove(screen.name) }
        }
        /// Removed screens whose context has settled since: they never request again.
        var settledRemoved: Set<String> = []

        var cellsOf: [String: [ObjectIdentifier]] = [:]
        /// Screens that had a delivery pending when a stalled writer to one of their cells reported its change,
        /// and cells whose stalled writer no screen heard.
        var unheard: Set<String> = []
        var unheardCells: Set<ObjectIdentifier> = []
        func makeScreen() -> Screen {
            nextName += 1
            let count = Int.random(in: 1...2, using: &random)
            let chosen = (0..<count).map { _ in cells.randomElement(using: &random)! }
            let screen = Screen(
                name: "screen \(seed).\(nextName)", scheduler: scheduler, cells: chosen,
                writesBack: Int.random(in: 0..<4, using: &random) == 0)
            cellsOf[screen.name] = chosen.map(ObjectIdentifier.init)
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1, 2:
                // A parent that shows a tracked child inside its own delivery (the child is checked with it).
                let cell = cells.randomElement(using: &random)!
                let child = Screen(
                    name: "\(screen.name) child", scheduler: scheduler, cells: [cell], writesBack: false)
                cellsOf[child.name] = [ObjectIdentifier(cell)]
                screen.child = child
                screen.rendersChildAtOnce = Bool.random(using: &random)
                screen.childRenders = Int.random(in: 1...3, using: &random)
                if Int.random(in: 0..<3, using: &random) == 0 {
                    screen.dropsChildAt = Int.random(in: 1...4, using: &random)
                }
                if Bool.random(using: &random) {
                    screen.startsChildInside = true
                } else {
                    onMainActor(child) { $0.startUpdatingView() }
                }
            case 3:
                // A one-shot screen: removes itself in its first, second or third delivery.
                if !screen.writesBack { screen.removesItselfAt = Int.random(in: 1...3, using: &random) }
            default: break
            }
            onMainActor(screen) { $0.startUpdatingView() }
            return screen
        }
        for _ in 0..<3 { screens.append(makeScreen()) }

        func value() -> Int {
            nextValue += 1
            return nextValue
        }

        /// Whether an off-main change was reported for a screen reading one of `screen`'s cells: a writer that
        /// stalled across this screen's first read (its `willSet` came before the screen tracked anything)
        /// reaches its store unheard by this screen, but not unheard by every screen. Or the screen could not
        /// hear a stalled writer at all (`unheard`).
        func reported(_ screen: Screen) -> Bool {
            if unheard.contains(screen.name) { return true }
            if screen.cells.contains(where: { unheardCells.contains(ObjectIdentifier($0)) }) { return true }
            let mine = Set(screen.cells.map(ObjectIdentifier.init))
            return recorder.all.contains { report in
                report.kind == .trackedChangeOffMainThread
                    && !(cellsOf[report.label].map { mine.isDisjoint(with: $0) } ?? true)
            }
        }

        /// The connected screens that read `cell` and will hear a change to it now: none of them has an update
        /// pending (its tracking, or its parent's for a child, would be spent — then the change requests nothing,
        /// the stated limit for a task's change, and the pending delivery shows it).
        func armedWatchers(of cell: StallableCell) -> Set<String> {
            var names: Set<String> = []
            // (A one-shot screen that removed itself hears nothing: its tracking went with its updater.)
            for screen in screens where !screen.removedItself && screen.cells.contains(where: { $0 === cell }) {
                if !screen.updateContext.isUpdatePending { names.insert(screen.name) }
            }
            return names
        }

        /// At a quiet point: settles, then checks every connected screen against its cells.
        func checkQuiet(_ step: Int) -> Bool {
            for screen in removedScreens
            where settledRemoved.contains(screen.name) && screen.updateContext.isUpdatePending {
                XCTFail("seed \(seed) step \(step): \(screen.name)'s removed updater still requests")
                return false
            }
            guard stalled.isEmpty, tasks.isEmpty else { return true }
            XCTAssertNoThrow(try scheduler.runUntilIdle(maxTurns: 500), "seed \(seed) step \(step): settles")
            settledRemoved.formUnion(removedScreens.map(\.name))
            let loops = recorder.all.filter { report in
                report.kind == .updateLoop && !screens.contains { $0.writesBack && $0.name == report.label }
            }
            if !loops.isEmpty {
                XCTFail("seed \(seed) step \(step): an update loop of a screen that writes nothing: \(loops)")
                return false
            }
            /// What `screen` shows once its write-back (an odd value in its first cell made even) is counted.
            func writtenBack(_ screen: Screen) -> [Int] {
                var values = screen.shown
                if screen.writesBack, let first = values.first, first % 2 != 0 {
                    for index in values.indices where screen.cells[index] === screen.cells[0] {
                        values[index] = first + 1
                    }
                }
                return values
            }
            // (A one-shot screen that removed itself while settling shows what it last showed: it is checked as
            // a removed one from the next step.)
            for screen in screens + screens.compactMap(\.child) where !screen.removedItself {
                let model = screen.cells.map(\.value)
                if screen.shown == model { continue }
                // The documented limit: a delivery that a tracked change caused cannot hear the write-back it
                // makes (until the updater is known to write back); the remedy is a request after writing.
                if reported(screen) || writtenBack(screen) == model {
                    // The documented fix: a request after the change shows it.
                    screen.setNeedsUpdate()
                    XCTAssertNoThrow(try scheduler.runUntilIdle(maxTurns: 500))
                    // (Against the cells now: the request's delivery may have written back again, unheard for
                    // the same reason.)
                    let now = screen.cells.map(\.value)
                    if screen.removedItself || screen.shown == now || writtenBack(screen) == now { continue }
                }
                XCTFail(
                    "seed \(seed) step \(step): \(screen.name) shows \(screen.shown), its cells \(model); "
                        + "reported: \(reported(screen)); last steps: \(log.suffix(16))")
                return false
            }
            return true
        }

        for step in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<22:
                let cell = Int.random(in: 0..<cells.count, using: &random)
                let v = value()
                log.append("cell\(cell)=\(v)")
                cells[cell].value = v
            case 22..<34:
                // A plain change, then an animated scope that changes another cell (the flush shows the first).
                let first = Int.random(in: 0..<cells.count, using: &random)
                let second = Int.random(in: 0..<cells.count, using: &random)
                let (a, b) = (value(), value())
                log.append("cell\(first)=\(a), scope { cell\(second)=\(b) }")
                cells[first].value = a
                scopesOpened += 1
                var transaction = UpdateTransaction(animation: .easeInOut(duration: 0.2))
                let id = scopesOpened
                transaction.addCompletion { completions.append("s\(id) \($0.wasShown) \($0)") }
                withUpdateTransaction(transaction) { cells[second].value = b }
            case 34..<44:
                // Off the main thread, finishing at once, or stalling between willSet and the store.
                let cell = cells.randomElement(using: &random)!
                let v = value()
                if Bool.random(using: &random) {
                    log.append("other thread =\(v)")
                    onAnotherThread { cell.value = v }
                } else {
                    log.append("stalled writer =\(v)")
                    // A screen whose delivery is already pending has no tracking armed: it does not hear this
                    // change at all (the documented limit: make tracked changes on the main actor, or request
                    // after an off-main one).
                    // (A one-shot screen that removed itself, in a delivery since the last step, hears nothing any more.)
                    let readers = (screens + screens.compactMap(\.child)).filter {
                        !$0.removedItself && $0.cells.contains(where: { $0 === cell })
                    }
                    for screen in readers where screen.updateContext.isUpdatePending { unheard.insert(screen.name) }
                    // Heard by no screen (none reads the cell, or every reader's delivery is pending): nothing
                    // reports it, and a screen that reads the cell before the store never hears of it either.
                    if readers.allSatisfy(\.updateContext.isUpdatePending) {
                        unheardCells.insert(ObjectIdentifier(cell))
                    }
                    let gate = DispatchSemaphore(value: 0)
                    let reportedWrite = DispatchSemaphore(value: 0)
                    let done = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        cell.write(v, stallingUntil: gate, reported: reportedWrite)
                        done.signal()
                    }
                    reportedWrite.wait()
                    stalled.append((gate, done))
                }
            case 44..<50:
                guard !stalled.isEmpty else { break }
                let index = Int.random(in: 0..<stalled.count, using: &random)
                log.append("writer stores")
                let writer = stalled.remove(at: index)
                writer.gate.signal()
                writer.done.wait()
            case 50..<56:
                // A task in a scope that outlives it, changing a cell when the test lets it.
                let cell = cells.randomElement(using: &random)!
                let v = value()
                log.append("scope { task: =\(v) }")
                scopesOpened += 1
                let id = scopesOpened
                var transaction = UpdateTransaction(animation: .default)
                transaction.addCompletion { completions.append("s\(id) \($0.wasShown) \($0)") }
                let go = DispatchSemaphore(value: 0)
                let ended = AtomicCounter()
                withUpdateTransaction(transaction) {
                    Task { @MainActor in
                        await withCheckedContinuation { continuation in
                            DispatchQueue.global().async {
                                go.wait()
                                continuation.resume()
                            }
                        }
                        cell.value = v
                        ended.add()
                    }
                }
                taskCells[id] = cell
                tasks.append((id, go, ended))
            case 56..<62:
                guard !tasks.isEmpty else { break }
                log.append("task runs")
                let task = tasks.removeFirst()
                if let cell = taskCells[task.id] { watchers[task.id] = armedWatchers(of: cell) }
                task.go.signal()
                spinMainLoop(timeout: 10) { task.ended.value == 1 }
            case 62..<66:
                // Removal: the updater goes; its screen stays, and its cells' changes request nothing.
                guard screens.count > 1 else { break }
                let screen = screens.remove(at: Int.random(in: 0..<screens.count, using: &random))
                log.append("remove \(screen.name)")
                forget(screen)
                screen.updateContext.removeUpdaters()
                screen.removed = true
                removedScreens.append(screen)
                screens.append(makeScreen())
            case 66..<70:
                // Release: the screen goes, and the cells keep nothing of it.
                guard screens.count > 1 else { break }
                let screen = screens.remove(at: Int.random(in: 0..<screens.count, using: &random))
                log.append("release \(screen.name)")
                forget(screen)
                links += screen.links
                screens.append(makeScreen())
            case 70..<73:
                // Replacement: a new screen on the same cells takes the place of an old one, released.
                guard !screens.isEmpty else { break }
                let index = Int.random(in: 0..<screens.count, using: &random)
                log.append("replace \(screens[index].name)")
                forget(screens[index])
                links += screens[index].links
                screens[index] = makeScreen()
            default:
                log.append("turn")
                scheduler.turn()
                // A screen that removed itself in this turn requests nothing after its removal.
                for screen in screens where screen.removedItself && screen.updateContext.isUpdatePending {
                    XCTFail("seed \(seed) step \(step): \(screen.name) requested after removing itself")
                    return
                }
            }
            // One-shot screens that removed themselves join the removed ones; a new screen takes their place.
            for screen in screens where screen.removedItself {
                log.append("\(screen.name) removed itself")
                forget(screen)
                screen.removed = true
                removedScreens.append(screen)
            }
            let oneShots = screens.filter(\.removedItself).count
            screens.removeAll(where: \.removedItself)
            for _ in 0..<oneShots { screens.append(makeScreen()) }
            if !checkQuiet(step) { return }
        }
        // The end: every writer stores, every task runs; then everything settles.
        for writer in stalled {
            writer.gate.signal()
            writer.done.wait()
        }
        stalled.removeAll()
        for task in tasks {
            if let cell = taskCells[task.id] { watchers[task.id] = armedWatchers(of: cell) }
            task.go.signal()
            spinMainLoop(timeout: 10) { task.ended.value == 1 }
        }
        tasks.removeAll()
        _ = checkQuiet(steps)
        spinMainLoop(timeout: 5) { completions.entries.count >= scopesOpened }
        let calls = completions.entries
        XCTAssertEqual(calls.count, scopesOpened, "seed \(seed): one call per scope: \(calls)")
        // A task's change to a cell that a screen still connected read, with no update pending (its tracking
        // listening), was shown: its scope was told so — or, a context that held its request being released
        // before showing it, that it was dropped with it (a release wins). A change that only spent trackings
        // heard requests nothing: the stated limit (0.4.0), and the pending delivery shows it.
        for (id, names) in watchers where !names.isEmpty {
            let told = calls.first { $0.hasPrefix("s\(id) ") } ?? "nothing"
            if !told.hasPrefix("s\(id) true") && !told.hasSuffix("contextReleased)") {
                XCTFail("seed \(seed): the task of scope s\(id) changed a cell \(names.sorted()) show; told \(told)")
            }
        }
        XCTAssertEqual(Set(calls.map { $0.split(separator: " ")[0] }).count, calls.count, "seed \(seed): twice")
        for screen in removedScreens {
            XCTAssertEqual(screen.callsAfterRemoval, 0, "seed \(seed): \(screen.name) called after its removal")
        }
        // Every screen goes now: the cells keep nothing of any (nor of a child, dropped inside a delivery or not).
        links += (screens + removedScreens).flatMap(\.links)
        screens.removeAll()
        removedScreens.removeAll()
        XCTAssertNoThrow(try scheduler.runUntilIdle(maxTurns: 500))
        for (index, link) in links.enumerated() {
            XCTAssertNil(link(), "seed \(seed): released screen #\(index) is still held by the cells' registrations")
        }
    }
}
