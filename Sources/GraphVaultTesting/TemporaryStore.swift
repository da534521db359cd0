import Foundation
import GraphVault
import ObjectModel
import ObjectStore

/// A fixture loaded into a store of its own for one test: a graphvault archive (what
/// `graphvault fixture` and `backup` write) restored, or JSON objects (what `graphvault export`
/// writes, or written by hand) imported, into a fresh temporary folder, with an object context
/// on it. The folder is removed when the value goes away, at the end of the test that holds it.
///
/// ```swift
/// @Test func aBookKnowsItsAuthor() throws {
///   let store = try TemporaryStore(loading: "Fixtures/library.gvault")
///   let books = try store.context.fetch(FetchRequest(entity: "Book", predicate: "author.alias == 'frank'"))
///   #expect(books.count == 2)
/// }
/// ```
///
/// Keep the value in a local constant for as long as its objects are used: objects refer to
/// their context, which this value keeps.
public final class TemporaryStore {
  /// The temporary store's path.
  public let path: String
  /// The model the store follows.
  public let model: ObjectModel
  /// An object context on the store.
  public let context: ObjectContext
  /// The store's folder, removed with this value (and by the next run when a test run is
  /// killed).
  private let folder: ScratchFolder

  /// Loads `fixture` into a new temporary store: a `.json` or `.jsonl` file is imported, any
  /// other file restored as an archive.
  /// - Parameters:
  ///   - model: the model to open the context with (for instance the app's own, built in
  ///     code); by default the one the store carries. An archive written by another version
  ///     of it (a fixture cut before the app's model grew an attribute) is migrated into it on
  ///     the way in, as a restore with `--model` migrates: renamed properties by their
  ///     renaming identifiers, added ones empty or at their defaults.
  ///   - modelPath: for JSON without a model: `.xcdatamodeld`, `.momd`, `.xcdatamodel`, `.mom`.
  ///   - transformers: the value transformers the model's transformable attributes name.
  ///   - password: the password of an encrypted archive.
  /// - Throws: ``VaultError`` when the fixture cannot be loaded, ``StoreError`` when the context
  ///   cannot open on it.
  public init(
    loading fixture: String, model: ObjectModel? = nil, modelPath: String? = nil,
    transformers: ValueTransformerRegistry = .standard, password: PasswordSource? = nil
  ) throws {
    folder = try ScratchFolder(kind: .fixture)
    path =
      folder.url.appendingPathComponent(
        URL(fileURLWithPath: fixture).deletingPathExtension().lastPathComponent + ".sqlite"
      ).path
    let suffix = URL(fileURLWithPath: fixture).pathExtension.lowercased()
    if suffix == "json" || suffix == "jsonl" {
      var options = ImportService.Options()
      options.modelPath = modelPath
      _ = try ImportService.importObjects(from: fixture, to: path, options: options)
    } else {
      var options = RestoreOptions()
      options.password = password
      if let model {
        options.versionSet = ModelVersionSet(
          name: model.name, versions: [model],
          currentVersionName: model.versionName ?? model.name)
      }
      _ = try RestoreService.restore(archive: Location(path: fixture), to: path, options: options)
    }
    let carried = try CoreDataStore(path: path).cachedModel()
    guard let chosen = model ?? carried else {
      throw VaultError(.modelUnavailable, "the loaded store carries no model: pass model:")
    }
    self.model = chosen
    context = try ObjectContext(storePath: path, model: chosen, transformers: transformers)
  }
}
