/// An independent reading of CONTRACT.md's precedence table, written apart from the library: it keeps
/// the explicit flags requested since the last delivery as a list and derives everything from it. The
/// model check and the benchmark compare the library with it.
package struct ReferenceRules: Sendable {
    package var defaultAnimated: Bool
    package private(set) var flagsSinceDelivery: [Bool] = []
    /// Whether a delivery is due.
    package private(set) var dirty = false
    package private(set) var suspended = 0
    /// Every delivery so far, in order.
    package private(set) var deliveries: [Bool] = []

    package init(defaultAnimated: Bool) {
        self.defaultAnimated = defaultAnimated
    }

    private var lastExplicit: Bool? { flagsSinceDelivery.last }

    private mutating func emit() {
        deliveries.append(lastExplicit ?? defaultAnimated)
        flagsSinceDelivery = []
        dirty = false
    }

    /// `setNeedsUpdate(animated: flag)`.
    package mutating func setNeeds(_ flag: Bool?) {
        if flag == true && lastExplicit == false {
            if suspended > 0 {
                dirty = true
                return
            }
            deliveries.append(false)
            flagsSinceDelivery = []
        }
        if let flag { flagsSinceDelivery.append(flag) }
        dirty = true
    }

    /// `update(animated: flag)`.
    package mutating func update(_ flag: Bool?) {
        if let flag { flagsSinceDelivery.append(flag) }
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
