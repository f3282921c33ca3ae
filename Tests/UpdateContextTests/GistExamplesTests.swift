import CoalescingTestSupport
import Foundation
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

// The seed gist's two examples, unchanged but for their `import` lines, over minimal stand-ins for the
// UIKit types they use, which record what the examples animate. Where UIKit exists the stand-ins cannot
// be declared (and no job runs tests there), so the file is compiled where UIKit does not exist: Linux and
// the macOS job.
#if !canImport(UIKit)
@MainActor class UIViewController {
    func viewWillAppear(_ animated: Bool) {}
}
@MainActor final class UILabel {
    var text: String?
    var textColor = UIColor.black
}
struct UIColor: Equatable {
    let name: String
    static let black = UIColor(name: "black")
    static let red = UIColor(name: "red")
}
@MainActor enum UIView {
    static var animations: [String] = []
    static func animate(withDuration duration: TimeInterval, animations: () -> Void) {
        Self.animations.append("animate(\(duration))")
        animations()
    }
}

// MARK: Example 1, as in the gist

class ExampleViewController: UIViewController {

    var label: UILabel! = UILabel()
    var renders: [Bool] = []

    private lazy var updater: ViewUpdatingContext = {
        // Decide if updates should be animated by default:
        let updater = ViewUpdatingContext(animated: false)  // Equivalent to: ViewUpdatingContext()
        updater.onUpdate {
            // Must capture self weakly to avoid retain cycle:
            [weak self] animated in
            self?.updateUI(animated: animated)
        }
        return updater
    }()

    var text = "Hello World!" {
        didSet {
            // Call setNeedsUpdate() whenever state changes and/or UI needs to be updated:
            updater.setNeedsUpdate()
        }
    }

    var textColor = UIColor.black {
        didSet {
            // Pass animated if you want to override the default updating behavior for the next update:
            updater.setNeedsUpdate(animated: true)
        }
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        // Always call update() in viewWillAppear:
        updater.update()
    }

    private func updateUI(animated: Bool) {
        renders.append(animated)
        // Update the user interface:
        let changes = {
            // Can capture self strongly since closure is called synchronously:
            self.label.text = self.text
            self.label.textColor = self.textColor
        }
        if animated {
            UIView.animate(withDuration: 0.3, animations: changes)
        } else {
            changes()
        }
    }
}

// MARK: Example 2, as in the gist: a model object shares the controller's context

class SharedContextViewController: UIViewController {

    var label: UILabel! = UILabel()
    var renders: [Bool] = []

    private lazy var updater: ViewUpdatingContext = {
        let updater = ViewUpdatingContext()
        updater.onUpdate {
            [weak self] animated in
            self?.updateUI(animated: animated)
        }
        return updater
    }()

    // Some other object that will let the view controller know it should update it's user interface:
    lazy var object: ExampleObject = {
        // This object must use the same context:
        return ExampleObject(viewUpdater: self.updater)
    }()

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        updater.update()
    }

    private func updateUI(animated: Bool) {
        renders.append(animated)
        let changes = {
            self.label.text = self.object.text
            self.label.textColor = self.object.textColor
        }
        if animated {
            UIView.animate(withDuration: 0.3, animations: changes)
        } else {
            changes()
        }
    }
}

class ExampleObject {

    private let viewUpdater: ViewUpdatingContext

    var text = "Hello World!" {
        didSet {
            viewUpdater.setNeedsUpdate()
        }
    }

    var textColor = UIColor.black {
        didSet {
            viewUpdater.setNeedsUpdate(animated: true)
        }
    }

    init(viewUpdater: ViewUpdatingContext) {
        self.viewUpdater = viewUpdater
    }
}

// MARK: What the gist's comments promise

final class GistExamplesTests: XCTestCase {
    func testExample1RendersOnAppearAndOncePerCycle() {
        MainActor.assumeIsolated {
            UIView.animations = []
            let controller = ExampleViewController()
            controller.viewWillAppear(false)
            XCTAssertEqual(controller.renders, [false], "update() in viewWillAppear renders at once")
            XCTAssertEqual(controller.label.text, "Hello World!")

            controller.text = "One"
            controller.text = "Two"
            controller.text = "Three"
            XCTAssertEqual(controller.renders.count, 1, "nothing until the end of the cycle")
            spinMainLoop { controller.renders.count == 2 }
            turnMainLoop()
            XCTAssertEqual(controller.renders, [false, false], "three changes, one non-animated update")
            XCTAssertEqual(controller.label.text, "Three")
            XCTAssertEqual(UIView.animations, [])

            controller.textColor = .red
            controller.text = "Four"
            spinMainLoop { controller.renders.count == 3 }
            turnMainLoop()
            XCTAssertEqual(controller.renders, [false, false, true], "setNeedsUpdate(animated: true) animates")
            XCTAssertEqual(UIView.animations, ["animate(0.3)"])
            XCTAssertEqual(controller.label.textColor, .red)
            XCTAssertEqual(controller.label.text, "Four")
        }
    }

    func testExample1ControllerIsNotKeptAliveByItsContext() {
        MainActor.assumeIsolated {
            weak var weakController: ExampleViewController?
            do {
                let controller = ExampleViewController()
                controller.viewWillAppear(false)
                controller.text = "pending"
                weakController = controller
            }
            XCTAssertNil(weakController, "released with an update pending")
            turnMainLoop()
            NotificationCenter.default.post(name: .applicationWillEnterForeground, object: nil)
        }
    }

    func testExample1RefreshesOnEnteringTheForeground() {
        MainActor.assumeIsolated {
            let controller = ExampleViewController()
            controller.viewWillAppear(false)
            NotificationCenter.default.post(name: .applicationWillEnterForeground, object: nil)
            XCTAssertEqual(controller.renders, [false, false])
        }
    }

    func testExample2ModelObjectSharesTheControllersContext() {
        MainActor.assumeIsolated {
            UIView.animations = []
            let controller = SharedContextViewController()
            let object = controller.object
            controller.viewWillAppear(false)
            XCTAssertEqual(controller.renders, [false])

            object.text = "From the model"
            object.textColor = .red
            spinMainLoop { controller.renders.count == 2 }
            turnMainLoop()
            XCTAssertEqual(controller.renders, [false, true])
            XCTAssertEqual(controller.label.text, "From the model")
            XCTAssertEqual(controller.label.textColor, .red)
        }
    }

    func testExample2ModelObjectOnABackgroundThread() {
        MainActor.assumeIsolated {
            let controller = SharedContextViewController()
            let object = UncheckedBox(controller.object)
            controller.viewWillAppear(false)
            onAnotherThread {
                object.value.text = "Background"
            }
            spinMainLoop { controller.renders.count == 2 }
            turnMainLoop()
            XCTAssertEqual(controller.renders, [false, false])
            XCTAssertEqual(controller.label.text, "Background")
        }
    }
}
#endif

struct UncheckedBox<T>: @unchecked Sendable {
    // @unchecked Sendable: the test hands the value to one other thread and synchronises with a semaphore.
    let value: T
    init(_ value: T) { self.value = value }
}
