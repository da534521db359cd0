import Foundation

/// How archives are named: `<store name>-<UTC time>.gvault`, so that a folder's names sort by
/// time within each store.
public enum ArchiveNaming {
  /// The extension every archive name ends with.
  public static let fileExtension = "gvault"

  /// The name of an archive of the store at `storePath` made at `time`
  /// (`Library-20261122T030000Z.gvault` for `Library.sqlite`).
  public static func name(forStoreAt storePath: String, at time: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    let store = URL(fileURLWithPath: storePath).deletingPathExtension().lastPathComponent
    return "\(store)-\(formatter.string(from: time)).\(fileExtension)"
  }

  /// Whether `name` is an archive's name.
  public static func isArchive(_ name: String) -> Bool {
    name.hasSuffix(".\(fileExtension)")
  }
}
