/// A lock taken through ``StorageBackend/lock(_:wait:)``.
public protocol StorageLock: AnyObject {
  /// Lets go of the lock.
  func release()
}
