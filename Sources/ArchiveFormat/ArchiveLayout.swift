/// The member names and constants of graphvault's archive format, versions 1 and 2 (documented
/// in `graphvault(1)`, ARCHIVE FORMAT). The versions differ only in how an object chunk holds
/// its records: format 1 as an array of class-tagged dictionaries, format 2 as one dictionary of
/// columns (``ColumnLayout``).
public enum ArchiveLayout {
  /// The format version a backup writes unless told otherwise.
  public static let formatVersion: Int64 = 2
  /// The format versions this code writes and reads.
  public static let formatVersions: ClosedRange<Int64> = 1...2

  /// Says that this version does not `verb` (`reads`, `writes`) archive format `format`, and
  /// which it does.
  package static func unsupportedFormat(_ format: Int64, verb: String) -> String {
    "archive format \(format) is not one this graphvault \(verb) (it \(verb) \(formatVersions.map(String.init).joined(separator: " and ")))"
  }
  /// The header, always first.
  public static let header = "graphvault.plist"
  /// The model descriptor.
  public static let modelDescriptor = "model/descriptor.plist"
  /// The source store's metadata (`Z_METADATA.Z_PLIST`, as stored).
  public static let storeMetadata = "store/metadata.plist"
  /// The source store's schema: every table, index and trigger with its SQL, in creation order.
  public static let storeSchema = "store/schema.plist"
  /// The source store's `Z_PRIMARYKEY` rows.
  public static let storePrimaryKeys = "store/primarykeys.plist"
  /// The source store's `Z_MODELCACHE` bytes, when it has them.
  public static let storeModelCache = "store/modelcache.bin"
  /// The index, always last; an archive without it is incomplete.
  public static let index = "index.plist"

  /// The member holding chunk `number` of `entity`'s objects.
  public static func objects(_ entity: String, chunk number: Int) -> String {
    "objects/\(entity)/\(sixDigits(number)).plist"
  }

  /// The entity whose objects the member `path` holds (`Book` for `objects/Book/000001.plist`);
  /// nil for any other member.
  public static func entity(ofObjectsMember path: String) -> String? {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0] == "objects", !parts[1].isEmpty else { return nil }
    return String(parts[1])
  }

  /// The member holding chunk `number` of the rows of a table the model does not describe.
  public static func rows(_ table: String, chunk number: Int) -> String {
    "tables/\(table)/\(sixDigits(number)).plist"
  }

  private static func sixDigits(_ number: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
  }

  /// A chunk is closed once its encoded size passes this many bytes, so neither backup nor
  /// restore holds more than about this much of the data at once.
  public static let chunkBytes = 4 << 20
  /// …or once it holds this many records.
  public static let chunkRecords = 20_000
}
