/// The member names and constants of graphvault's archive format, versions 1 to 5 (documented
/// in `docs/FORMAT.md`). Format 1 holds an object chunk as an array of class-tagged
/// dictionaries, formats 2 to 5 as one dictionary of columns (``ColumnLayout``); format 3 adds
/// the change ledger (``changes``) and incremental archives; format 4, text columns coded as
/// numbered words (``WordCoding``); format 5 puts a full archive's sketches after its objects
/// (``sketches``), so that a backup hashes the rows as it reads them.
public enum ArchiveLayout {
  /// The format version a backup writes unless told otherwise.
  public static let formatVersion: Int64 = 5
  /// The format versions this code writes and reads.
  public static let formatVersions: ClosedRange<Int64> = 1...5
  /// The first format with a change ledger (``changes``), and so incremental archives.
  public static let ledgerFormat: Int64 = 3
  /// The first format whose text columns may be coded as numbered words (``WordCoding``).
  public static let wordsFormat: Int64 = 4
  /// The first format whose full archives hold their sketches after the objects
  /// (``sketches``) rather than in ``changes``.
  public static let lateSketchesFormat: Int64 = 5

  /// Says that this version does not `verb` (`reads`, `writes`) archive format `format`, and
  /// which it does.
  package static func unsupportedFormat(_ format: Int64, verb: String) -> String {
    "archive format \(format) is not one this graphvault \(verb) (it \(verb) \(formatVersions.dropLast().map(String.init).joined(separator: ", ")) and \(formatVersions.upperBound))"
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
  /// What the next incremental backup needs, and what an incremental archive changed
  /// (``ChangeLedger``): format 3, after the store's members and before the objects.
  public static let changes = "changes.plist"
  /// A full archive's sketches (``ChangeLedger/sets``): format 5, after the objects and the
  /// tables' rows, before the index.
  public static let sketches = "sketches.plist"
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
