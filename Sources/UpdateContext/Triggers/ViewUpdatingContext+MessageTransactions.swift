import Foundation
import NotificationCoalescing

// Foundation's typed messages (see ViewUpdatingContext+Messages.swift): requests that say how to animate, per
// message, and every form in Foundation's identifier spelling (`.keyboardWillShow`) as well as `M.self`.
#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension ViewUpdatingContext {
    /// Starts a subscription whose every main-actor message of `messageType` (for `subject`, or any) requests
    /// an update with the transaction `transaction` makes of it — the animation the message calls for (a
    /// keyboard message's duration and curve: `UpdateAnimation/keyboard(_:)`),
    /// custom values, completions — or a plain request when it returns `nil`.
    ///
    /// N messages in a cycle make one delivery, whose transaction merges theirs (the last animation wins).
    /// Posted inside `withUpdateTransaction`, a message's request also joins that scope: the transaction made of
    /// the message wins, and the scope's completions wait for it too.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// final class Inbox: Sendable {}
    ///
    /// struct UnreadChanged: NotificationCenter.MainActorMessage {
    ///     typealias Subject = Inbox
    ///     var unread: Int
    /// }
    ///
    /// let updateContext = ViewUpdatingContext()
    /// let subscription = updateContext.requestUpdates(on: UnreadChanged.self) { message in
    ///     message.unread > 0 ? UpdateTransaction(animation: .spring(duration: 0.3)) : nil
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - center: The center to observe.
    ///   - transaction: The transaction of a message's request, made on the main actor inside the post.
    ///   - file: The caller's file (`#fileID`): diagnostics name this creation site for the requests.
    ///   - line: The caller's line.
    /// - Returns: The subscription (see `requestUpdates(on:of:center:animated:file:line:)`).
    ///   Any thread.
    public func requestUpdates<M: NotificationCenter.MainActorMessage>(
        on messageType: M.Type, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        transaction: @escaping @MainActor (M) -> UpdateTransaction?, file: StaticString = #fileID,
        line: UInt = #line
    ) -> UpdateSubscription where M.Subject: AnyObject {
        let link = storage.link
        let site = RequestSite(file: file, line: line)
        return MessageTrigger.start(link: link, center: center, cancelsOnRelease: true) { trigger in
            center.addObserver(of: subject, for: messageType) { message in
                if trigger.isCancelled { return }
                if let request = transaction(message) {
                    link.setNeedsUpdate(transaction: request, site: site)
                } else {
                    link.setNeedsUpdate(nil, site: site)
                }
            }
        }
    }

    /// Starts a subscription whose every async message of `messageType` requests an update with the transaction
    /// `transaction` makes of it (`nil`: a plain request). Async messages are observed on tasks of their own,
    /// which no `withUpdateTransaction` reaches: this is how such a message's request animates.
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - center: The center to observe.
    ///   - transaction: The transaction of a message's request, made on Foundation's task for the message.
    ///   - file: The caller's file (`#fileID`): diagnostics name this creation site for the requests.
    ///   - line: The caller's line.
    /// - Returns: The subscription. Any thread.
    public func requestUpdates<M: NotificationCenter.AsyncMessage>(
        on messageType: M.Type, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        transaction: @escaping @Sendable (M) -> UpdateTransaction?, file: StaticString = #fileID,
        line: UInt = #line
    ) -> UpdateSubscription where M.Subject: AnyObject {
        let link = storage.link
        let site = RequestSite(file: file, line: line)
        return MessageTrigger.start(link: link, center: center, cancelsOnRelease: true) { trigger in
            center.addObserver(of: subject, for: messageType) { message in
                if trigger.isCancelled { return }
                if let request = transaction(message) {
                    link.setNeedsUpdate(transaction: request, site: site)
                } else {
                    link.setNeedsUpdate(nil, site: site)
                }
            }
        }
    }

    // MARK: Foundation's identifier spelling

    /// `requestUpdates(on:of:center:animated:file:line:)` for a message named in
    /// Foundation's identifier spelling: `updateContext.requestUpdates(on: .keyboardWillShow)`. Where the SDK
    /// declares the identifier for more than one message type, name the subject or pass the type (see
    /// `refreshes(on:of:center:)`).
    public func requestUpdates<
        Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.MainActorMessage
    >(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        requestUpdates(on: M.self, of: subject, center: center, animated: animated, file: file, line: line)
    }

    /// The async-message form of `requestUpdates(on:of:center:animated:file:line:)`.
    public func requestUpdates<Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.AsyncMessage>(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        requestUpdates(on: M.self, of: subject, center: center, animated: animated, file: file, line: line)
    }

    /// `requestUpdates(on:of:center:transaction:file:line:)` for a message named in
    /// Foundation's identifier spelling.
    public func requestUpdates<
        Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.MainActorMessage
    >(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        transaction: @escaping @MainActor (M) -> UpdateTransaction?, file: StaticString = #fileID,
        line: UInt = #line
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        requestUpdates(on: M.self, of: subject, center: center, transaction: transaction, file: file, line: line)
    }

    /// The async-message form of
    /// `requestUpdates(on:of:center:transaction:file:line:)`.
    public func requestUpdates<Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.AsyncMessage>(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        transaction: @escaping @Sendable (M) -> UpdateTransaction?, file: StaticString = #fileID,
        line: UInt = #line
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        requestUpdates(on: M.self, of: subject, center: center, transaction: transaction, file: file, line: line)
    }

    /// `refreshes(on:of:center:)` for a lifecycle message named in Foundation's identifier
    /// spelling: `updateContext.refreshes(on: .willEnterForeground, of: UIApplication.shared)`.
    ///
    /// Name the subject: iOS 26's SDK declares `.willEnterForeground` for UIKit's `UIApplication` and `UIScene`
    /// messages and Foundation's `NSExtensionContext` one, and `.didBecomeActive` for two, so without `of:`
    /// the identifier is ambiguous (a compile error). Or pass the type:
    /// `updateContext.refreshes(on: UIApplication.WillEnterForegroundMessage.self)`.
    @discardableResult
    public func refreshes<Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.MainActorMessage>(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        refreshes(on: M.self, of: subject, center: center)
    }
}
#endif
