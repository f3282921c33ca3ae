/// An independent reading of CONTRACT.md's precedence table, written apart from the library: it keeps
/// the explicit flags requested since the last delivery as a list and derives everything from it. The
/// model check and the benchmark compare the library with it.
///
/// Transactions (CONTRACT.md, "Transactions"): a request with a transaction is an explicit request whose
/// flag is "has an animation"; the last animated request's animation is the delivery's (a request with
/// `animated: true` and no transaction stands for the default animation, `nil` here); every completion of
/// the requests a delivery absorbs belongs to that delivery.
package struct ReferenceRules: Sendable {
    package var defaultAnimated: Bool
    package private(set) var flagsSinceDelivery: [Bool] = []
    /// Whether a delivery is due.
    package private(set) var dirty = false
    package private(set) var suspended = 0
    /// Every delivery so far, in order.
    package private(set) var deliveries: [Bool] = []
    /// The animation of the last animated request since the last delivery (`nil`: the default one).
    package private(set) var pendingAnimation: UpdateAnimationLabel?
    /// The completions (by id) of the requests since the last delivery.
    package private(set) var pendingCompletions: [Int] = []
    /// Per delivery, in order: its animation (`nil` when not animated; "default" for the default one),
    /// and the completions it absorbed.
    package private(set) var deliveredAnimations: [String?] = []
    package private(set) var deliveredCompletions: [[Int]] = []

    package init(defaultAnimated: Bool) {
        self.defaultAnimated = defaultAnimated
    }

    private var lastExplicit: Bool? { flagsSinceDelivery.last }

    private mutating func emit() {
        let animated = lastExplicit ?? defaultAnimated
        record(animated: animated)
        flagsSinceDelivery = []
        dirty = false
    }

    private mutating func record(animated: Bool) {
        deliveries.append(animated)
        deliveredAnimations.append(animated ? (pendingAnimation ?? "default") : nil)
        deliveredCompletions.append(pendingCompletions)
        pendingAnimation = nil
        pendingCompletions = []
    }

    /// `setNeedsUpdate(transaction:)` with `animation` (its description; `nil`: not animated) and a
    /// completion `id`, if any.
    package mutating func setNeeds(transaction animation: UpdateAnimationLabel?, completion id: Int?) {
        setNeeds(animation != nil)
        if let animation { pendingAnimation = animation }
        if let id { pendingCompletions.append(id) }
    }

    /// `setNeedsUpdate(animated: flag)`.
    package mutating func setNeeds(_ flag: Bool?) {
        if flag == true { pendingAnimationIsDefault() }
        if flag == true && lastExplicit == false {
            if suspended > 0 {
                dirty = true
                return
            }
            record(animated: false)
            flagsSinceDelivery = []
        }
        if let flag { flagsSinceDelivery.append(flag) }
        dirty = true
    }

    /// An animated request without a transaction: the last animated request's animation is the default.
    /// (Before an early flush it changes nothing the flush shows: the flush is not animated.)
    private mutating func pendingAnimationIsDefault() {
        pendingAnimation = nil
    }

    /// `update(animated: flag)`.
    package mutating func update(_ flag: Bool?) {
        if flag == true { pendingAnimationIsDefault() }
        if let flag { flagsSinceDelivery.append(flag) }
        if suspended > 0 {
            dirty = true
        } else {
            emit()
        }
    }

    /// `update(transaction:)` with `animation` (its description; `nil`: not animated) and a completion `id`,
    /// if any: an explicit flag ("has an animation"), delivered now with what is pending.
    package mutating func update(transaction animation: UpdateAnimationLabel?, completion id: Int?) {
        if let id { pendingCompletions.append(id) }
        if let animation { pendingAnimation = animation }
        flagsSinceDelivery.append(animation != nil)
        if suspended > 0 {
            dirty = true
        } else {
            emit()
        }
    }

    /// The end of a cycle (also `updateIfNeeded()`).
    package mutating func endOfCycle() {
        if dirty && suspended == 0 { emit() }
    }

    package mutating func suspend() {
        suspended += 1
    }

    package mutating func resume() {
        suspended -= 1
        endOfCycle()
    }

    /// The deliveries of one cycle's burst of `setNeedsUpdate(animated:)` calls, the cycle's end included.
    package static func deliveries(for burst: [Bool?], defaultAnimated: Bool = false) -> [Bool] {
        var model = ReferenceRules(defaultAnimated: defaultAnimated)
        for flag in burst { model.setNeeds(flag) }
        model.endOfCycle()
        return model.deliveries
    }
}

/// An animation as the model knows it: its description (`UpdateAnimation.description`).
package typealias UpdateAnimationLabel = String

/// A small deterministic generator, so that a failing random sequence can be replayed.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
