import ArchiveFormat
import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport

/// Test archives of the sample Library model: a store filled by `populate` through an object
/// context, backed up into `directory`.
enum LibraryArchive {
  static let modelPath = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  static func make(
    in directory: TemporaryDirectory, named name: String, compression: Compression = .none,
    formatVersion: Int64 = ArchiveLayout.formatVersion, populate: (ObjectContext) throws -> Void
  ) throws -> String {
    let model = try ModelSource.model(at: modelPath)
    let store = directory.path("\(name).sqlite").path
    try StoreCreator.create(at: store, model: model)
    let context = try ObjectContext(storePath: store, model: model)
    try populate(context)
    try context.save()
    var options = BackupService.Options()
    options.modelPath = modelPath
    options.compression = compression
    options.formatVersion = formatVersion
    options.output = Location(path: directory.path("\(name).gvault").path)
    return try BackupService.backup(storePath: store, options: options).archive
  }
}
