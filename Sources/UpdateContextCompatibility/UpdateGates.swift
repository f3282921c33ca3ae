import UpdateContext

#if canImport(SwiftUI) && canImport(Combine)
import Combine
import SwiftUI
import UpdateContextSwiftUI

// The Updaters-shaped SwiftUI update gates (`onChangeOf:`, `while:`, `onReceive:`, `onElementOf:`): thin views
// over `UpdateGate`, whose decisions are tested on every platform. The gates on a context's deliveries
// (`onDeliveryOf:`, `onRenderOf:`) are in UpdateContextSwiftUI, with `GatedContent`.
//
// Every gate has the same shape. An outer view (not `Equatable`) is re-evaluated whenever its parent
// hands it new inputs, which is cheap: it only builds the inner view. The inner view is `Equatable` and
// holds the content and one `UpdateGate`; SwiftUI compares it with the inner view it holds and
// re-evaluates the content only when they differ, that is when the gate passes. Events (a publisher, a
// sequence, a context's deliveries) change the outer view's own state, so the outer view is re-evaluated
// with its newest inputs and the inner view gets the newest content, never the content of the last
// evaluation the gate let through.

extension View {
    /// Re-evaluates this view's body only when `value` changes: the seed's `Updaters.Nonduplicate`.
    ///
    /// ```swift
    /// import UpdateContext
    /// import UpdateContextCompatibility
    /// import SwiftUI
    ///
    /// struct ChartView: View {
    ///     let points: [Double]
    ///     let hoverLabel: String
    ///     var body: some View { Text("\(points.count) points, \(hoverLabel)") }
    /// }
    ///
    /// struct Screen: View {
    ///     let points: [Double]
    ///     let hoverLabel: String
    ///     var body: some View {
    ///         // The hover label alone does not redraw the chart.
    ///         ChartView(points: points, hoverLabel: hoverLabel).updatesOnly(onChangeOf: points)
    ///     }
    /// }
    /// ```
    ///
    /// Each time the parent's body is evaluated, `value` is compared with the value of the last
    /// evaluation that reached this view; only a different value re-evaluates it — with all the inputs
    /// of that evaluation. Until then the view keeps the inputs it last got, even inputs that changed.
    ///
    /// How it meets SwiftUI's own machinery:
    /// - It filters what comes from the parent only. The view's own `@State`, `@StateObject`,
    ///   `@ObservedObject`, `@Environment` and `@Observable` reads still re-evaluate its body (with the
    ///   inputs it last got); the gate cannot and does not hold them back.
    /// - `@State` inside the gated view keeps its identity and value: the gate never recreates the view.
    /// - When the gate passes, SwiftUI diffs the new body as usual; a view that is `Equatable` itself
    ///   is compared after the gate passes. The first appearance is never gated.
    /// - `==` of `Value` runs on the main thread, once per evaluation of the parent.
    ///
    /// - Parameter value: What the view depends on.
    public func updatesOnly<Value: Equatable>(onChangeOf value: Value) -> some View {
        EquatableView(content: GatedContent(gate: UpdateGate(onChangeOf: value), content: self))
    }

    /// Re-evaluates this view's body only while `isOpen` is true: the seed's `Updaters.True`.
    ///
    /// ```swift
    /// import UpdateContext
    /// import UpdateContextCompatibility
    /// import SwiftUI
    ///
    /// struct Ticker: View {
    ///     let price: Double
    ///     let isScrolling: Bool
    ///     var body: some View {
    ///         Text("\(price)").updatesOnly(while: !isScrolling)
    ///     }
    /// }
    /// ```
    ///
    /// Every evaluation of the parent in which `isOpen` is true reaches the view; one in which it is
    /// false does not, so the view keeps what it showed when the flag was last true. Turning the flag
    /// true again re-evaluates it with the newest inputs. The rest is as for
    /// ``SwiftUI/View/updatesOnly(onChangeOf:)``: the view's own state still updates it; the first
    /// appearance is never gated.
    public func updatesOnly(while isOpen: Bool) -> some View {
        EquatableView(content: GatedContent(gate: .whileOpen(isOpen), content: self))
    }

    /// Re-evaluates this view's body only when `publisher` emits: the seed's `Updaters.Event`.
    ///
    /// ```swift
    /// import UpdateContext
    /// import UpdateContextCompatibility
    /// import Combine
    /// import SwiftUI
    ///
    /// struct Clock: View {
    ///     let now: Date
    ///     let ticks: PassthroughSubject<Void, Never>
    ///     var body: some View {
    ///         Text("\(now)").updatesOnly(onReceive: ticks)
    ///     }
    /// }
    /// ```
    ///
    /// Evaluations of the parent never reach the view by themselves; each value the publisher emits
    /// re-evaluates it once, with the newest inputs its parent gave (not those of the last evaluation
    /// let through). Values emitted together in one SwiftUI update re-evaluate it once.
    ///
    /// The subscription is SwiftUI's `onReceive`: made when the view appears, cancelled when it
    /// disappears. A publisher that replays its current value to a new subscriber (`@Published`'s
    /// `$value`, `CurrentValueSubject`) counts that as an event. The rest is as for
    /// ``SwiftUI/View/updatesOnly(onChangeOf:)``.
    ///
    /// > Important: Emit on the main thread, as `onReceive` requires. To drive a view from another
    /// > thread, coalesced to once per cycle, use a context:
    /// > ``SwiftUI/View/updatesOnly(onDeliveryOf:animation:)``.
    public func updatesOnly<P: Publisher>(onReceive publisher: P) -> some View where P.Failure == Never {
        PublisherGate(publisher: publisher, content: self)
    }

    /// Re-evaluates this view's body only when `sequence` yields an element: the `AsyncSequence` form of
    /// ``SwiftUI/View/updatesOnly(onReceive:)``.
    ///
    /// The sequence is iterated in SwiftUI's `task` (from when the view appears until it disappears), on
    /// the main actor; a sequence that finishes or throws stops re-evaluating the view. The rest is as for
    /// the publisher form.
    @available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
    public func updatesOnly<S: AsyncSequence & Sendable>(onElementOf sequence: S) -> some View {
        SequenceGate(sequence: sequence, content: self)
    }
}

/// The outer view of `updatesOnly(onReceive:)`: counts the publisher's values.
private struct PublisherGate<P: Publisher, Content: View>: View where P.Failure == Never {
    let publisher: P
    let content: Content
    @State private var events: UInt64 = 0

    var body: some View {
        EquatableView(content: GatedContent(gate: UpdateGate(onChangeOf: events), content: content))
            .onReceive(publisher) { _ in events &+= 1 }
    }
}

/// The outer view of `updatesOnly(onElementOf:)`: counts the sequence's elements.
@available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
private struct SequenceGate<S: AsyncSequence & Sendable, Content: View>: View {
    let sequence: S
    let content: Content
    @State private var events: UInt64 = 0

    var body: some View {
        EquatableView(content: GatedContent(gate: UpdateGate(onChangeOf: events), content: content))
            .task {
                do {
                    for try await _ in sequence { events &+= 1 }
                } catch {
                    // A sequence that throws stops the gate, like one that finishes.
                }
            }
    }
}

#endif
