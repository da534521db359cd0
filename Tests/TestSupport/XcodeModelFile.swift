import Foundation

/// Writes Xcode model files for tests: an `.xcdatamodel` folder whose `contents` holds the
/// given elements inside Xcode's `<model>` element, as Xcode saves them.
public enum XcodeModelFile {
  /// Writes `.xcdatamodel` folder `folder` with `elements` (`<entity>`s, `<composite>`s) as
  /// its model.
  public static func write(_ elements: String, at folder: URL) throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(
      """
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
      \(elements)
      </model>

      """.utf8
    ).write(to: folder.appendingPathComponent("contents"))
  }
}
