import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

/// A seeded random model of one coalescing context: notifications (every mask, both held styles, `.now`)
/// and typed messages (two main-actor types, three subjects) enqueued from the main thread, from other
/// threads and from inside observers, with turns and releases at random points. After every turn, what was
/// posted, in order, must be exactly what the reference model (a plain list, O(n) per enqueue) says.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
final class TypedMessageRandomTests: XCTestCase {
    /// One held item of the reference model.
    private struct Entry: Equatable {
        enum Kind: Equatable {
            case note(name: Notification.Name, sender: Int?, idle: Bool)
            case message(type: String, subject: Int?)
        }
        let kind: Kind
        let id: Int

        /// What an observer records when it posts.
        var posted: String {
            switch kind {
            case .note(let name, let sender, _): "\(name.rawValue) \(sender.map(String.init) ?? "-") #\(id)"
            case .message(let type, let subject): "\(type) \(subject.map(String.init) ?? "-") #\(id)"
            }
        }
    }

    private struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// One enqueue, decided on the main thread and made on any thread.
    private enum Op: Sendable {
        case note(
            name: Notification.Name, sender: Int?, mask: NotificationQueue.NotificationCoalescing.RawValue, idle: Bool,
            id: Int)
        case ping(subject: Int?, id: Int)
        case pong(subject: Int?, id: Int)
    }

    private static let privateMode = RunLoop.Mode("TypedMessageRandomTests.private")
    private static let subjects = [MessageSubject("0"), MessageSubject("1"), MessageSubject("2")]
    private static let masks: [NotificationQueue.NotificationCoalescing] = [
        [.onName, .onSender], .onName, .onSender, [],
    ]

    func testRandomEnqueuesOfMessagesAndNotificationsAgreeWithTheReferenceModel() {
        for seed in 1...150 {
            run(seed: UInt64(seed), steps: 200)
            if failed { return }
        }
    }

    private static func perform(_ op: Op, on context: NotificationCoalescingContext) {
        switch op {
        case .note(let name, let sender, let mask, let idle, let id):
            // `.d` waits for a turn in a private mode: a default turn keeps it (and its place).
            context.enqueue(
                Notification(name: name, object: sender.map { subjects[$0] }, userInfo: ["id": id]),
                postingStyle: idle ? .whenIdle : .asap,
                coalesceMask: NotificationQueue.NotificationCoalescing(rawValue: mask),
                forModes: name == .d ? [privateMode] : nil)
        case .ping(let subject, let id): context.enqueue(Ping(id), subject: subject.map { subjects[$0] })
        case .pong(let subject, let id): context.enqueue(Pong(value: id), subject: subject.map { subjects[$0] })
        }
    }

    /// The reference model's enqueue: a notification replaces held notifications matching under its mask
    /// and goes to the end; a message replaces the held message of its (type, subject) in its place, or
    /// goes to the end when none is held.
    private static func hold(_ op: Op, into model: inout [Entry]) {
        let entry: Entry
        switch op {
        case .note(let name, let sender, let rawMask, let idle, let id):
            let mask = NotificationQueue.NotificationCoalescing(rawValue: rawMask)
            model.removeAll { held in
                guard case .note(let heldName, let heldSender, _) = held.kind, !mask.isEmpty else { return false }
                if mask.contains(.onName) && heldName != name { return false }
                if mask.contains(.onSender) && heldSender != sender { return false }
                return true
            }
            entry = Entry(kind: .note(name: name, sender: sender, idle: idle), id: id)
        case .ping(let subject, let id):
            entry = Entry(kind: .message(type: "Ping", subject: subject), id: id)
        case .pong(let subject, let id):
            entry = Entry(kind: .message(type: "Pong", subject: subject), id: id)
        }
        if case .message = entry.kind, let place = model.firstIndex(where: { $0.kind == entry.kind }) {
            model[place] = entry
        } else {
            model.append(entry)
        }
    }

    private func randomOp(
        names: [Notification.Name], id: Int, using random: inout Generator
    ) -> Op {
        func subject() -> Int? {
            Int.random(in: 0...3, using: &random) == 3 ? nil : Int.random(in: 0...2, using: &random)
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0, 1:
            let name = names.randomElement(using: &random)!
            let sender = subject()
            return .note(
                name: name, sender: sender, mask: Self.masks.randomElement(using: &random)!.rawValue,
                idle: Int.random(in: 0..<4, using: &random) == 0, id: id)
        case 2: return .ping(subject: subject(), id: id)
        default: return .pong(subject: subject(), id: id)
        }
    }

    private struct WeakContext: Sendable {
        weak var value: NotificationCoalescingContext?
        init(_ value: NotificationCoalescingContext) { self.value = value }
    }

    /// Whether a check failed (a seeded run stops at its first failure, which names its seed and step).
    private var failed = false

    private func expectEqual<T: Equatable>(
        _ actual: T, _ expected: T, _ message: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard actual != expected else { return }
        failed = true
        XCTFail("\(message): \(actual) is not \(expected)", file: file, line: line)
    }

    private static func waitsForPrivateMode(_ entry: Entry) -> Bool {
        if case .note(.d, _, _) = entry.kind { true } else { false }
    }

    /// The reactions: an enqueue that an observer makes when the trigger notification `id` posts.
    private final class Reactions {
        var byTrigger: [Int: Op] = [:]
    }

    private func run(seed: UInt64, steps: Int) {
        var random = Generator(state: seed)
        let scheduler = ManualScheduler()
        let log = MessageLog()
        let reactions = Reactions()
        var nextID = 0
        var model: [Entry] = []

        func makeContext() -> NotificationCoalescingContext {
            let context = NotificationCoalescingContext(scheduler: scheduler)
            for name in [Notification.Name.a, .b, .c, .d] {
                context.observe(name) { [unowned context] _, note in
                    let sender = (note.object as? MessageSubject).map { $0.name } ?? "-"
                    let id = note.userInfo!["id"] as! Int
                    log.append("\(name.rawValue) \(sender) #\(id)")
                    // A trigger's observer enqueues from inside the post: a later turn posts it.
                    if let op = reactions.byTrigger.removeValue(forKey: id) { Self.perform(op, on: context) }
                }
            }
            MainActor.assumeIsolated {
                context.observe(Ping.self) { message in log.append("Ping #\(message.value)") }
                context.observe(Pong.self) { message in log.append("Pong #\(message.value)") }
            }
            return context
        }

        func posted(_ entry: Entry) -> String {
            switch entry.kind {
            case .note(let name, let sender, _): "\(name.rawValue) \(sender.map(String.init) ?? "-") #\(entry.id)"
            case .message(let type, _): "\(type) #\(entry.id)"
            }
        }

        var context = makeContext()
        for step in 0..<steps {
            nextID += 1
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let op = randomOp(names: [.a, .b, .a, .b, .d], id: nextID, using: &random)
                Self.perform(op, on: context)
                Self.hold(op, into: &model)
            case 45..<55:
                // From another thread, waited for.
                let op = randomOp(names: [.a, .b], id: nextID, using: &random)
                // Weak: the other thread's closure may outlive the wait, and must not keep the context alive
                // past a release the next step makes.
                let box = WeakContext(context)
                let done = DispatchSemaphore(value: 0)
                onAnotherThread {
                    if let context = box.value { Self.perform(op, on: context) }
                    done.signal()
                }
                done.wait()
                Self.hold(op, into: &model)
            case 55..<62:
                // A `.now` notification: removes the held notifications it matches (never a message), posts.
                let name = [Notification.Name.a, .b].randomElement(using: &random)!
                let sender: Int? = Bool.random(using: &random) ? nil : Int.random(in: 0...2, using: &random)
                let mask = Self.masks.randomElement(using: &random)!
                Self.hold(.note(name: name, sender: sender, mask: mask.rawValue, idle: false, id: nextID), into: &model)
                let entry = model.removeLast()
                log.removeAll()
                context.enqueue(
                    Notification(name: name, object: sender.map { Self.subjects[$0] }, userInfo: ["id": nextID]),
                    postingStyle: .now, coalesceMask: mask)
                expectEqual(log.entries, [posted(entry)], "seed \(seed) step \(step): .now")
            case 62..<70:
                // A trigger whose observer enqueues from inside the post.
                let trigger = Op.note(
                    name: .c, sender: nil,
                    mask: NotificationQueue.NotificationCoalescing([.onName, .onSender]).rawValue,
                    idle: false, id: nextID)
                nextID += 1
                reactions.byTrigger[nextID - 1] = randomOp(names: [.a, .b], id: nextID, using: &random)
                Self.perform(trigger, on: context)
                Self.hold(trigger, into: &model)
            case 70..<74:
                // Released with work pending: nothing posts; a new context takes over.
                context = makeContext()  // the old one goes here
                model = []
                reactions.byTrigger.removeAll()
                log.removeAll()
                scheduler.turn()
                expectEqual(log.entries, [], "seed \(seed) step \(step): a released context posted")
            case 74..<80:
                // A turn in the private mode: posts only what waits for it; the rest keeps its place.
                log.removeAll()
                let admitted = model.filter(Self.waitsForPrivateMode)
                let asap = admitted.filter { if case .note(_, _, true) = $0.kind { false } else { true } }
                let idle = admitted.filter { if case .note(_, _, true) = $0.kind { true } else { false } }
                model.removeAll(where: Self.waitsForPrivateMode)
                scheduler.turn(mode: Self.privateMode)
                expectEqual(log.entries, (asap + idle).map(posted), "seed \(seed) step \(step): private turn")
                expectEqual(context.pendingCount, model.count, "seed \(seed) step \(step): held")
            default:
                log.removeAll()
                let admitted = model.filter { !Self.waitsForPrivateMode($0) }
                let asap = admitted.filter { if case .note(_, _, true) = $0.kind { false } else { true } }
                let idle = admitted.filter { if case .note(_, _, true) = $0.kind { true } else { false } }
                model.removeAll { !Self.waitsForPrivateMode($0) }
                // Reactions fire as their triggers post, into the next turn's model.
                for entry in asap + idle {
                    if case .note(.c, _, _) = entry.kind, let op = reactions.byTrigger[entry.id] {
                        Self.hold(op, into: &model)
                    }
                }
                scheduler.turn()
                expectEqual(log.entries, (asap + idle).map(posted), "seed \(seed) step \(step): turn")
                // A trigger coalesced away never posted: its reaction never happens.
                reactions.byTrigger = reactions.byTrigger.filter { key, _ in model.contains { $0.id == key } }
                expectEqual(context.pendingCount, model.count, "seed \(seed) step \(step): held")
                if failed { return }
            }
        }
    }
}

#endif
