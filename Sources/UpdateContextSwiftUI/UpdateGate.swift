import CCoalescingSupport
import UpdateContext

/// The decision behind the SwiftUI update gates (`updatesOnly(onChangeOf:)` and the others): whether a
/// new evaluation of a gated view's parent reaches the gated content.
///
/// SwiftUI re-evaluates a view's body when its parent hands it new inputs, unless the view is
/// `Equatable` and compares equal to the one it holds. Each gate wraps the content in such a view
/// holding one `UpdateGate`, and answers SwiftUI's comparison with ``passes(comparedWith:)``. The logic is
/// here, in a value type that builds everywhere, so that it is tested on every platform; the SwiftUI
/// layer only carries it.
///
/// ```swift
/// // not compiled: package API (GateTable runs this)
/// let shown = UpdateGate(onChangeOf: 1)
/// let same = UpdateGate(onChangeOf: 1)
/// let changed = UpdateGate(onChangeOf: 2)
/// assert(!same.passes(after: shown))
/// assert(changed.passes(after: shown))
///
/// let open = UpdateGate.whileOpen(true)
/// let closed = UpdateGate.whileOpen(false)
/// assert(!closed.passes(after: open))
/// assert(UpdateGate.whileOpen(true).passes(after: closed))
/// ```
///
/// Two rules:
/// - ``Rule/onChange``: passes when the key differs from the one the content last got — the seed's
///   `Updaters.Nonduplicate`; with an event counter as the key, `Updaters.Event`; with a context's
///   delivery number, the context gate.
/// - ``Rule/whileOpen``: passes whenever the newer gate is open, whatever the older one held — the
///   seed's `Updaters.True`.
///
/// The first evaluation is never gated: content that appears is evaluated once, even behind a closed
/// gate (SwiftUI has nothing to show otherwise).
///
/// > Note: A value, usable from any thread when `Key` is `Sendable`. Each gate records when it was
/// > made (a process-wide counter), so the comparison does not depend on which side SwiftUI passes
/// > first: SwiftUI does not document the order of `==`'s operands.
package struct UpdateGate<Key: Equatable> {
    /// How a gate decides.
    package enum Rule: Hashable, Sendable {
        /// Passes when the key changed.
        case onChange
        /// Passes while the newer gate is open.
        case whileOpen
    }

    /// The gate's rule.
    package let rule: Rule
    /// What the content depends on (for ``Rule/onChange``).
    package let key: Key
    /// Whether the gate is open (for ``Rule/whileOpen``; `true` for ``Rule/onChange``).
    package let isOpen: Bool
    /// The order in which gates were made: a later gate has a larger number.
    package let generation: UInt64

    /// A gate that passes when `key` differs from the key the content last got.
    package init(onChangeOf key: Key) {
        self.init(rule: .onChange, key: key, isOpen: true)
    }

    private init(rule: Rule, key: Key, isOpen: Bool) {
        self.rule = rule
        self.key = key
        self.isOpen = isOpen
        generation = UInt64(cvu_next_generation())
    }

    /// Whether this gate, made for a newer evaluation of the parent, reaches the content that last got
    /// `previous`.
    package func passes(after previous: UpdateGate) -> Bool {
        switch rule {
        case .onChange: return key != previous.key
        case .whileOpen: return isOpen
        }
    }

    /// Whether the newer of this gate and `other` (by ``generation``) passes after the older; `false` for
    /// a gate and itself. Symmetric: what a gated view answers when SwiftUI compares it with the one it
    /// holds, whichever SwiftUI passes first.
    package func passes(comparedWith other: UpdateGate) -> Bool {
        if generation == other.generation { return false }
        return generation < other.generation ? other.passes(after: self) : passes(after: other)
    }
}

extension UpdateGate where Key == Bool {
    /// A gate that passes whenever it is open (`isOpen`), whatever the content last got.
    package static func whileOpen(_ isOpen: Bool) -> UpdateGate<Bool> {
        UpdateGate(rule: .whileOpen, key: isOpen, isOpen: isOpen)
    }
}

extension UpdateGate: Sendable where Key: Sendable {}
