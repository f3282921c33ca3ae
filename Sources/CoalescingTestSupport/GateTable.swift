import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI

/// The SwiftUI update gates, as timelines: what evaluations of the parent, events and the content's own
/// state changes do to a gated view. Platform-neutral, so that the same rows are checked on Linux
/// (against `UpdateGate` carried by a model of SwiftUI's `EquatableView`) and on macOS (against SwiftUI
/// itself, in the macOS job).
package enum GateKind: String, CaseIterable, Sendable {
    /// `updatesOnly(onChangeOf:)`: `p<n>` is an evaluation of the parent with value `n`.
    case onChange
    /// `updatesOnly(while:)`: `p+` / `p-` is an evaluation of the parent with the flag true / false.
    case whileOpen
    /// `updatesOnly(onReceive:)`, `updatesOnly(onElementOf:)`, `updatesOnly(onDeliveryOf:)`: `p` is an
    /// evaluation of the parent, `e` an event (a value, an element, a delivery).
    case onEvent
}

/// One row: a timeline, and the same timeline with each evaluation of the content written after the
/// token that caused it as `*v`, where `v` is the version of the inputs it saw (the number of the
/// parent's evaluation that produced them: 1 for the first `p`).
///
/// Tokens: `p…` (see ``GateKind``), `e` an event, `s` a change of the content's own state (`@State`,
/// an observed object it holds), which re-evaluates it whatever the gate says.
package struct GateRow: Sendable, CustomStringConvertible {
    package let kind: GateKind
    package let timeline: String
    package let expected: String

    package init(_ kind: GateKind, _ timeline: String, _ expected: String) {
        self.kind = kind
        self.timeline = timeline
        self.expected = expected
    }

    package var description: String { "\(kind.rawValue): \(timeline)" }
}

package enum GateTable {
    package static let rows: [GateRow] = [
        // Nonduplicate: a change of the value reaches the content, an equal value does not.
        GateRow(.onChange, "p1", "p1 *1"),
        GateRow(.onChange, "p1 p1 p1", "p1 *1 p1 p1"),
        GateRow(.onChange, "p1 p2 p2 p3", "p1 *1 p2 *2 p2 p3 *4"),
        GateRow(.onChange, "p1 p2 p1", "p1 *1 p2 *2 p1 *3"),
        GateRow(.onChange, "p1 p1 s", "p1 *1 p1 s *1"),  // its own state: the inputs it last got
        GateRow(.onChange, "p1 p1 p2 s", "p1 *1 p1 p2 *3 s *3"),
        GateRow(.onChange, "p1 e p1", "p1 *1 e p1"),  // events mean nothing to it
        // True: every evaluation while open reaches the content; closed, none does.
        GateRow(.whileOpen, "p+ p+ p+", "p+ *1 p+ *2 p+ *3"),
        GateRow(.whileOpen, "p+ p- p- p+", "p+ *1 p- p- p+ *4"),
        GateRow(.whileOpen, "p- p- p+", "p- *1 p- p+ *3"),  // the first appearance is never gated
        GateRow(.whileOpen, "p+ p- s", "p+ *1 p- s *1"),
        GateRow(.whileOpen, "p- s p- p+ s", "p- *1 s *1 p- p+ *3 s *3"),
        // Event (publisher, sequence, context deliveries): only events reach it, with the newest inputs.
        GateRow(.onEvent, "p p p", "p *1 p p"),
        GateRow(.onEvent, "p p e", "p *1 p e *2"),
        GateRow(.onEvent, "p e e", "p *1 e *1 e *1"),
        GateRow(.onEvent, "p p e p p e", "p *1 p e *2 p p e *4"),
        GateRow(.onEvent, "p p s e", "p *1 p s *1 e *2"),
        GateRow(.onEvent, "p e p s", "p *1 e *1 p s *1"),
    ]
}

/// A model of SwiftUI's `EquatableView` carrying real `UpdateGate`s, and the gates' outer views: plays
/// `timeline` and writes each content evaluation as ``GateRow`` does.
package func playGateTimeline(_ kind: GateKind, _ timeline: String) -> String {
    switch kind {
    case .onChange: return play(timeline, kind: kind) { key, _, _ in UpdateGate(onChangeOf: key) }
    case .whileOpen: return play(timeline, kind: kind) { _, flag, _ in UpdateGate.whileOpen(flag) }
    case .onEvent: return play(timeline, kind: kind) { _, _, events in UpdateGate(onChangeOf: events) }
    }
}

private func play<Key>(
    _ timeline: String, kind: GateKind, gate makeGate: (_ key: Int, _ flag: Bool, _ events: Int) -> UpdateGate<Key>
) -> String {
    // What the outer view holds: the newest inputs and, for events, its own count.
    var version = 0
    var key = 0
    var flag = false
    var events = 0
    // What the inner (Equatable) view holds: the gate and inputs it was last evaluated with.
    var held: (gate: UpdateGate<Key>, version: Int)?
    var out: [String] = []

    func evaluateOuter() {
        let candidate = (gate: makeGate(key, flag, events), version: version)
        // SwiftUI compares the view it holds with the new one (in an order it does not document).
        if let current = held, !candidate.gate.passes(comparedWith: current.gate) { return }
        held = candidate
        out.append("*\(version)")
    }

    for token in timeline.split(separator: " ") {
        out.append(String(token))
        switch token.first {
        case "p":
            version += 1
            let argument = token.dropFirst()
            if argument == "+" || argument == "-" {
                flag = argument == "+"
            } else if let number = Int(argument) {
                key = number
            }
            evaluateOuter()
        case "e":
            if kind == .onEvent {
                events += 1
                evaluateOuter()  // the outer view's own state changed
            }
        case "s":
            if let current = held { out.append("*\(current.version)") }  // its own state: its held inputs
        default:
            preconditionFailure("playGateTimeline: unknown token \(token) in \(timeline)")
        }
    }
    return out.joined(separator: " ")
}

/// The gates' rules written out directly (no `UpdateGate`): the reference the model is compared with.
package func referenceGateTimeline(_ kind: GateKind, _ timeline: String) -> String {
    var version = 0
    var shown: Int?  // the inputs of the last evaluation
    var lastKey: Int?
    var out: [String] = []
    for token in timeline.split(separator: " ") {
        out.append(String(token))
        let argument = token.dropFirst()
        switch (token.first, kind) {
        case ("p", .onChange):
            version += 1
            let value = Int(argument)!
            if shown == nil || value != lastKey {
                shown = version
                lastKey = value
                out.append("*\(version)")
            }
        case ("p", .whileOpen):
            version += 1
            if shown == nil || argument == "+" {
                shown = version
                out.append("*\(version)")
            }
        case ("p", .onEvent):
            version += 1
            if shown == nil {
                shown = version
                out.append("*\(version)")
            }
        case ("e", .onEvent):
            shown = version
            out.append("*\(version)")
        case ("e", _):
            break
        case ("s", _):
            if let shown { out.append("*\(shown)") }
        default:
            preconditionFailure("referenceGateTimeline: unknown token \(token) in \(timeline)")
        }
    }
    return out.joined(separator: " ")
}

/// A random timeline for `kind` (`steps` tokens, starting with an evaluation of the parent).
package func randomGateTimeline(_ kind: GateKind, steps: Int, using generator: inout some RandomNumberGenerator)
    -> String
{
    var tokens: [String] = []
    for index in 0..<steps {
        let roll = index == 0 ? 0 : Int.random(in: 0..<10, using: &generator)
        switch roll {
        case 0..<6:
            switch kind {
            case .onChange: tokens.append("p\(Int.random(in: 0..<3, using: &generator))")
            case .whileOpen: tokens.append(Bool.random(using: &generator) ? "p+" : "p-")
            case .onEvent: tokens.append("p")
            }
        case 6..<8: tokens.append("e")
        default: tokens.append("s")
        }
    }
    return tokens.joined(separator: " ")
}
