import Foundation

/// One context merging every save of another on the same store, as it is posted
/// (``ObjectContext/mergeChanges(fromSavesOf:)``); it stops when released or cancelled.
///
/// The notification is posted on the thread that saved, and the merge runs there: use the two
/// contexts on one thread, as a context asks of its objects.
public final class MergeObservation: @unchecked Sendable {
  private let lock = NSLock()
  private var token: (any NSObjectProtocol)?
  private weak var target: ObjectContext?
  private var error: StoreError?

  init(merging source: ObjectContext, into target: ObjectContext) {
    self.target = target
    token = NotificationCenter.default.addObserver(
      forName: .objectContextDidSave, object: source, queue: nil
    ) { [weak self] notification in
      self?.merge(notification)
    }
  }

  deinit { cancel() }

  /// The last merge's error, if it failed (the store could not be read).
  public var lastError: StoreError? { lock.withLock { error } }

  /// Stops merging.
  public func cancel() {
    lock.withLock {
      if let token { NotificationCenter.default.removeObserver(token) }
      token = nil
    }
  }

  private func merge(_ notification: Notification) {
    guard let target = lock.withLock({ self.target }) else { return }
    do {
      try target.mergeChanges(fromContextDidSave: notification)
    } catch {
      lock.withLock { self.error = error }
    }
  }
}

extension ObjectContext {
  /// Merges every save `other` makes from now on into this context, as Core Data's
  /// `automaticallyMergesChangesFromParent` does for a context's parent: objects it changed are
  /// read again with this context's own unsaved changes kept, objects it deleted leave. Keep
  /// the returned observation while merging is wanted.
  ///
  /// ```swift
  /// let merging = reader.mergeChanges(fromSavesOf: writer)
  /// try writer.save()   // reader's objects are up to date now
  /// ```
  public func mergeChanges(fromSavesOf other: ObjectContext) -> MergeObservation {
    MergeObservation(merging: other, into: self)
  }
}
