import ArchiveFormat
import ArchiveStorage
import DurableIO
import Foundation
import LibArchive
import Migration
import ObjectModel
import ObjectStore
import PropertyList
import S3
import SQLite

/// An error from graphvault's services, classified by what a user or script must do about it,
/// with the lower layer's error as its cause.
public struct VaultError: Error, CustomStringConvertible, Sendable {
  /// What kind of failure it is.
  public enum Kind: String, Codable, Sendable, Equatable {
    /// An input (store, archive, model file) does not exist or cannot be read.
    case inputMissing
    /// An input is not what it should be (not SQLite, not a Core Data store, damaged).
    case invalidInput
    /// The destination exists and replacing it was not asked for.
    case destinationExists
    /// The destination cannot be created where it was asked for (its folder is missing).
    case destinationUnavailable
    /// Reading or writing failed (a full disk, an I/O error).
    case ioFailure
    /// Another run holds the lock.
    case locked
    /// No model, a model that does not fit, or no migration path.
    case modelUnavailable
    /// A password is missing, wrong or unreadable (or access was denied).
    case accessDenied
    /// The environment is misconfigured (no credentials for object storage, a bad endpoint).
    case configuration
    /// The request itself cannot be carried out as given (options that contradict each other,
    /// a policy that keeps nothing).
    case usage
  }

  /// What kind of failure it is.
  public let kind: Kind
  /// A sentence saying what is wrong.
  public let detail: String
  /// The lower layer's error.
  public let cause: (any Error & Sendable)?

  /// Creates an error.
  public init(_ kind: Kind, _ detail: String, cause: (any Error & Sendable)? = nil) {
    self.kind = kind
    self.detail = detail
    self.cause = cause
  }

  /// Classifies a lower layer's error.
  public init(wrapping error: any Error) {
    switch error {
    case let error as VaultError:
      self = error
    case let error as StoreError:
      let kind: Kind
      switch error.kind {
      case .missing: kind = .inputMissing
      case .notADatabase, .notACoreDataStore, .validation, .invalidValue, .deleteDenied,
        .constraintConflict:
        kind = .invalidInput
      case .modelMismatch, .unsupported: kind = .modelUnavailable
      case .destinationExists: kind = .destinationExists
      case .database: kind = .ioFailure
      case .conflict: kind = .locked
      case .invalidPredicate: kind = .usage
      }
      if error.kind == .database, let sqlite = error.underlying as? SQLiteError {
        self.init(Self.kind(of: sqlite), error.description, cause: error)
        return
      }
      self.init(kind, error.description, cause: error)
    case let error as ArchiveError:
      let kind: Kind
      switch error.errno {
      case ENOENT, EACCES: kind = .inputMissing
      case ENOSPC, EIO, EDQUOT: kind = .ioFailure
      default: kind = .invalidInput
      }
      self.init(kind, error.description, cause: error)
    case let error as MigrationError:
      switch error.kind {
      case .refused: self.init(.modelUnavailable, error.detail, cause: error)
      case .unreadableMapping: self.init(.inputMissing, error.detail, cause: error)
      case .store:
        if let cause = error.cause {
          self.init(wrapping: cause)
        } else {
          self.init(.ioFailure, error.detail, cause: error)
        }
      }
    case let error as ArchiveFormatError:
      self.init(
        error.kind == .malformed ? .invalidInput : .accessDenied, error.description, cause: error)
    case let error as StorageError:
      let kind: Kind
      switch error.kind {
      case .notFound: kind = .inputMissing
      case .exists: kind = .destinationExists
      case .notAnArchive, .unreadable: kind = .inputMissing
      case .locked: kind = .locked
      case .io: kind = .ioFailure
      case .denied: kind = .accessDenied
      case .configuration: kind = .configuration
      }
      self.init(kind, error.detail, cause: error)
    case let error as S3Error:
      let kind: Kind
      switch error.kind {
      case .notFound: kind = .inputMissing
      case .denied: kind = .accessDenied
      case .unavailable, .failed: kind = .ioFailure
      case .configuration: kind = .configuration
      }
      self.init(kind, error.detail, cause: error)
    case let error as SQLiteError:
      self.init(Self.kind(of: error), error.description, cause: error)
    case let error as DurableIOError:
      // A folder that refuses a file (a lock, a temporary store) is a permission problem.
      let denied = error.errno == EACCES || error.errno == EPERM
      self.init(denied ? .accessDenied : .ioFailure, error.description, cause: error)
    case let error as PropertyListError:
      self.init(.invalidInput, error.description, cause: error)
    case let error as ModelError:
      self.init(
        error.kind == .missing ? .inputMissing : .modelUnavailable, error.description, cause: error)
    default:
      self.init(.ioFailure, String(describing: error))
    }
  }

  /// What a failure of SQLite means for the user: the disk or the file failed (74), another
  /// process holds the database (75), the file's permissions (77), or, for everything else —
  /// a constraint, a value or a statement the data provoked, a damaged page — bad data (65).
  static func kind(of error: SQLiteError) -> Kind {
    if error.isIOFailure { return .ioFailure }
    if error.isBusy { return .locked }
    if error.isPermissionDenied { return .accessDenied }
    return .invalidInput
  }

  /// The detail (which already names the file and the cause).
  public var description: String { detail }
}

/// Runs `body`, turning any error into a ``VaultError``.
func vault<R>(_ body: () throws -> R) throws(VaultError) -> R {
  do {
    return try body()
  } catch {
    let wrapped = VaultError(wrapping: error)
    let detail = ScratchFolder.describe(wrapped.detail)
    guard detail != wrapped.detail else { throw wrapped }
    throw VaultError(wrapped.kind, detail, cause: wrapped.cause)
  }
}
