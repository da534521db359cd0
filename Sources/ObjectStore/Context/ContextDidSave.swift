import Foundation
import ObjectModel

extension Notification.Name {
  /// Posted on `NotificationCenter.default` by an ``ObjectContext`` after a save has committed
  /// (and its `didSave` hooks have run), with the context as the object and a
  /// ``ContextDidSave`` under ``ContextDidSave/userInfoKey``: Core Data's
  /// `NSManagedObjectContextDidSave`.
  public static let objectContextDidSave = Notification.Name("GraphVaultObjectContextDidSave")
}

/// What one save wrote: the objects it inserted, updated and deleted, by reference, as Core
/// Data's did-save notification carries them. Another context on the same store brings its
/// objects up to date with ``ObjectContext/mergeChanges(fromContextDidSave:)``.
public struct ContextDidSave: Sendable, Equatable {
  /// The key of the notification's user info that holds the changes.
  public static let userInfoKey = "changes"

  /// The objects the save inserted.
  public var inserted: Set<ObjectReference>
  /// The objects whose values or relationships the save changed.
  public var updated: Set<ObjectReference>
  /// The objects the save deleted.
  public var deleted: Set<ObjectReference>

  /// Changes made of the three sets.
  public init(
    inserted: Set<ObjectReference>, updated: Set<ObjectReference>, deleted: Set<ObjectReference>
  ) {
    self.inserted = inserted
    self.updated = updated
    self.deleted = deleted
  }

  /// The changes a ``Notification/Name/objectContextDidSave`` notification carries; nil for
  /// any other notification.
  public init?(_ notification: Notification) {
    guard notification.name == .objectContextDidSave,
      let changes = notification.userInfo?[Self.userInfoKey] as? ContextDidSave
    else { return nil }
    self = changes
  }
}
