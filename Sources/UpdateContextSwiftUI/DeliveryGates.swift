import UpdateContext

#if canImport(SwiftUI) && canImport(Combine)
import SwiftUI

// The gates on a context's deliveries: thin views over `UpdateGate`, whose decisions are tested on every
// platform. Every gate has the same shape. An outer view (not `Equatable`) observes the context's face and
// is re-evaluated whenever its parent hands it new inputs, which is cheap: it only builds the inner view.
// The inner view is `Equatable` and holds the content and one `UpdateGate`; SwiftUI compares it with the
// inner view it holds and re-evaluates the content only when they differ, that is when the gate passes.
// (UpdateContextCompatibility's Updaters-shaped gates use the same inner view.)

/// The view SwiftUI compares: the content and the gate it passed. Its `==` is the gate's decision.
package struct GatedContent<Key: Equatable, Content: View>: Equatable {
    package let gate: UpdateGate<Key>
    package let content: Content

    package init(gate: UpdateGate<Key>, content: Content) {
        self.gate = gate
        self.content = content
    }

    package static func == (lhs: GatedContent, rhs: GatedContent) -> Bool {
        !lhs.gate.passes(comparedWith: rhs.gate)
    }
}

extension GatedContent: View {
    package var body: some View { content }
}

extension View {
    /// Re-evaluates this view's body only when `context` delivers: at most once per run-loop cycle (once
    /// per frame with a `.framePaced` scheduler), however often and from whatever thread the context
    /// was asked.
    ///
    /// ```swift
    /// import UpdateContext
    /// import UpdateContextSwiftUI
    /// import SwiftUI
    ///
    /// final class Sensor: @unchecked Sendable {    // written at 10 kHz on a background thread
    ///     let updateContext = ViewUpdatingContext()
    ///     private let lock = NSLock()
    ///     private var stored = 0.0
    ///     var reading: Double { lock.withLock { stored } }
    ///     func record(_ value: Double) {
    ///         lock.withLock { stored = value }
    ///         updateContext.setNeedsUpdate()
    ///     }
    /// }
    ///
    /// struct SensorView: View {
    ///     let sensor: Sensor
    ///     var body: some View {
    ///         Text("\(sensor.reading)").updatesOnly(onDeliveryOf: sensor.updateContext)
    ///     }
    /// }
    /// ```
    ///
    /// Evaluations of the parent never reach the view by themselves; each delivery of the context
    /// re-evaluates it once, with the newest inputs its parent gave. The view's body reads the source
    /// itself (not `@Published` state, which would invalidate it at the source's pace).
    ///
    /// The delivery's animated flag becomes the change's animation: from iOS 15 / macOS 12 / tvOS 15 /
    /// watchOS 8 an animated delivery animates with `animation` and a non-animated one does not animate
    /// (`animation(_:value:)` on the delivery number); on older systems an animated delivery animates
    /// with `Animation.default` (the transaction of ``DeliveryObject``).
    ///
    /// - Parameters:
    ///   - context: The context whose deliveries re-evaluate the view; its ``ViewUpdatingContext/observableObject``
    ///     is observed. Its other updaters run as usual.
    ///   - animation: The animation of an animated delivery (`nil`: none), unless the delivery's transaction
    ///     chose one (`withUpdateAnimation`, `setNeedsUpdate(transaction:)`): that one wins.
    public func updatesOnly(onDeliveryOf context: ViewUpdatingContext, animation: Animation? = .default)
        -> some View
    {
        DeliveryGate(deliveries: context.observableObject, animation: animation, content: self)
    }

    /// Re-evaluates this view's body only when `context` renders: once per cycle in which its state
    /// changed (or a forced delivery), never in a cycle whose changes cancel out.
    ///
    /// The view reads the state as rendered from `context.observableObject.state` (or the newest from
    /// `context.state`). The rest is as for ``SwiftUI/View/updatesOnly(onDeliveryOf:animation:)``.
    public func updatesOnly<State: Equatable & Sendable>(
        onRenderOf context: StateUpdatingContext<State>, animation: Animation? = .default
    ) -> some View {
        RenderGate(rendered: context.observableObject, animation: animation, content: self)
    }
}

/// The outer view of `updatesOnly(onDeliveryOf:animation:)`: observes the context's face.
private struct DeliveryGate<Content: View>: View {
    @ObservedObject var deliveries: DeliveryObject
    let animation: Animation?
    let content: Content

    var body: some View {
        AnimatedGate(delivery: deliveries.delivery, animation: animation, content: content)
    }
}

/// The outer view of `updatesOnly(onRenderOf:animation:)`: observes the state context's face.
private struct RenderGate<State: Equatable & Sendable, Content: View>: View {
    @ObservedObject var rendered: RenderedStateObject<State>
    let animation: Animation?
    let content: Content

    var body: some View {
        AnimatedGate(delivery: rendered.delivery, animation: animation, content: content)
    }
}

/// The gate on a delivery number, with the delivery's animation.
private struct AnimatedGate<Content: View>: View {
    let delivery: ContextDelivery
    let animation: Animation?
    let content: Content

    /// An animation the delivery's transaction chose (other than the default one) wins over the gate's.
    private var chosen: Animation? {
        if let requested = delivery.animation, requested != .default { return requested.swiftUIAnimation }
        return animation
    }

    var body: some View {
        let gated = EquatableView(
            content: GatedContent(gate: UpdateGate(onChangeOf: delivery.number), content: content))
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
            gated.animation(delivery.animated ? chosen : nil, value: delivery.number)
        } else {
            gated
        }
    }
}
#endif
