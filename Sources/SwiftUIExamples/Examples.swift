// A SwiftUI screen that uses every update gate and observable face, and UIKit/AppKit controllers that
// use the Combine trigger and the deliveries publisher, so that `apple-typecheck matrix .` compiles them
// against the iOS and macOS SDKs at the package's minimums. No product exports this target; on Linux it
// holds only what needs neither SwiftUI nor Combine.
import Foundation
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI

/// A source written from a background thread at a high rate; the views read it when they are told to.
final class Sensor: @unchecked Sendable {
    // @unchecked Sendable: `stored` is read and written only under `lock`; `context` is Sendable.
    let context = ViewUpdatingContext(animated: false)
    private let lock = NSLock()
    private var stored = 0.0

    var reading: Double {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Any thread, any rate: the views update once per cycle.
    func record(_ value: Double) {
        lock.lock()
        stored = value
        lock.unlock()
        context.setNeedsUpdate()
    }
}

struct Profile: Equatable, Sendable {
    var name = ""
    var score = 0
}

#if canImport(SwiftUI) && canImport(Combine)
import Combine
import SwiftUI

/// Every gate, each around the same small view.
struct GatesScreen: View {
    let sensor: Sensor
    let profile: StateUpdatingContext<Profile>
    let colorIndex: Int
    let isLive: Bool
    let ticks: PassthroughSubject<Void, Never>
    let stream: AsyncStream<Int>

    var body: some View {
        VStack {
            Swatch(index: colorIndex).updatesOnly(onChangeOf: colorIndex)
            Swatch(index: colorIndex).updatesOnly(while: isLive)
            Swatch(index: colorIndex).updatesOnly(onReceive: ticks)
            if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
                Swatch(index: colorIndex).updatesOnly(onElementOf: stream)
            }
            Text("\(sensor.reading)").updatesOnly(onDeliveryOf: sensor.context, animation: .easeInOut)
            Text(profile.observableObject.state.name).updatesOnly(onRenderOf: profile)
            DeliveryCounter(deliveries: sensor.context.observableObject)
            RenderedProfile(profile: profile.observableObject)
            if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
                ObservedCounter(deliveries: sensor.context.observableDelivery)
            }
        }
    }
}

/// A view with state of its own: the gates keep it.
struct Swatch: View {
    let index: Int
    @State private var taps = 0

    var body: some View {
        Text("colour \(index), tapped \(taps)").onTapGesture { taps += 1 }
    }
}

/// The `ObservableObject` face of a context.
struct DeliveryCounter: View {
    @ObservedObject var deliveries: DeliveryObject

    var body: some View {
        Text("delivery \(deliveries.delivery.number)")
    }
}

/// The `ObservableObject` face of a state context.
struct RenderedProfile: View {
    @ObservedObject var profile: RenderedStateObject<Profile>

    var body: some View {
        Text("\(profile.state.name): \(profile.state.score)")
    }
}

/// The `@Observable` face of a context.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
struct ObservedCounter: View {
    let deliveries: ObservableDelivery

    var body: some View {
        Text("delivery \(deliveries.delivery.number)")
    }
}

/// A model whose `@Published` properties drive a UIKit or AppKit controller through the Combine trigger.
final class TitleModel {
    @Published var title = ""
    @Published var subtitle = ""
}
#endif

#if canImport(UIKit) && canImport(Combine) && !os(watchOS)
import UIKit

/// A UIKit controller on the canonical path (`ViewUpdating`), fed by `@NeedsUpdate` and the Combine
/// trigger, and told about deliveries by the publisher.
final class TitleViewController: UIViewController, ViewUpdating {
    private let model: TitleModel
    let updateContext = ViewUpdatingContext()
    @NeedsUpdate var badge = 0
    private let titleLabel = UILabel()
    private var subscriptions = Set<AnyCancellable>()
    private(set) var deliveryCount = 0

    init(model: TitleModel) {
        self.model = model
        super.init(nibName: nil, bundle: nil)
        updateContext.requestUpdates(from: model.$title.dropFirst()).store(in: &subscriptions)
        updateContext.requestUpdates(from: model.$subtitle.dropFirst(), animated: true).store(in: &subscriptions)
        updateContext.deliveries.sink { [weak self] _ in self?.deliveryCount += 1 }.store(in: &subscriptions)
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) { fatalError("not used") }

    override func viewDidLoad() {
        super.viewDidLoad()
        view.addSubview(titleLabel)
        startUpdatingView()
    }

    func updateView(animated: Bool) {
        let text = model.title + " — " + model.subtitle + (badge > 0 ? " (\(badge))" : "")
        updateContext.animateChanges { self.titleLabel.text = text }  // the delivery's transaction
    }

    /// A badge change animated with a spring, and a completion once it is on screen.
    func bump() {
        var transaction = UpdateTransaction(animation: .spring(duration: 0.4, bounce: 0.3))
        transaction.addCompletion { completion in print("badge shown:", completion.wasShown) }
        withUpdateTransaction(transaction) { badge += 1 }
    }
}
#elseif canImport(AppKit) && canImport(Combine)
import AppKit

/// An AppKit controller on the canonical path (`ViewUpdating`), fed by `@NeedsUpdate` and the Combine
/// trigger, and told about deliveries by the publisher.
final class TitleViewController: NSViewController, ViewUpdating {
    private let model: TitleModel
    let updateContext = ViewUpdatingContext()
    @NeedsUpdate var badge = 0
    private let titleField = NSTextField(labelWithString: "")
    private var subscriptions = Set<AnyCancellable>()
    private(set) var deliveryCount = 0

    init(model: TitleModel) {
        self.model = model
        super.init(nibName: nil, bundle: nil)
        updateContext.requestUpdates(from: model.$title.dropFirst()).store(in: &subscriptions)
        updateContext.requestUpdates(from: model.$subtitle.dropFirst(), animated: true).store(in: &subscriptions)
        updateContext.deliveries.sink { [weak self] _ in self?.deliveryCount += 1 }.store(in: &subscriptions)
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) { fatalError("not used") }

    override func loadView() {
        view = titleField
    }

    override func viewDidLoad() {
        super.viewDidLoad()
        startUpdatingView()
    }

    func updateView(animated: Bool) {
        let text = model.title + " — " + model.subtitle + (badge > 0 ? " (\(badge))" : "")
        if animated {
            titleField.animator().stringValue = text
        } else {
            titleField.stringValue = text
        }
    }
}
#endif
