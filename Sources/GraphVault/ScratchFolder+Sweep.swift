import DurableIO
import Foundation

extension ScratchFolder {
  /// How long a folder must have been left unchanged before a sweep may take it: a run makes
  /// its folder and then its owner file, and a folder caught between the two is its run's.
  package static let settleTime: TimeInterval = 60

  /// How long a folder without an owner file must have been left unchanged before a sweep
  /// takes it (left by a version that made none, or by a removal cut short).
  package static let ownerlessAge: TimeInterval = 24 * 60 * 60

  /// Removes the scratch folders in `folder` whose runs are gone, and returns their names.
  ///
  /// A folder is taken only when all of these hold: its name is a scratch folder's
  /// (`graphvault-UUID`, `graphvault-fixture-UUID`); it is a directory, not a link, owned by
  /// this user; it has not changed for ``settleTime``; and no run holds its owner file's lock
  /// (or, without an owner file, it has not changed for ``ownerlessAge``).
  @discardableResult
  package static func sweepAbandoned(in folder: URL, now: Date = Date()) -> [String] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
      return []
    }
    var removed: [String] = []
    for name in names where isScratchName(name) {
      let path = folder.appendingPathComponent(name).path
      var status = stat()
      guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR,
        status.st_uid == geteuid()
      else { continue }
      let age = now.timeIntervalSince1970 - Double(status.st_mtim.tv_sec)
      guard age >= settleTime else { continue }
      let owner = path + "/" + ownerFile
      let abandoned =
        access(owner, F_OK) == 0 ? FileLock.isUnheld(owner) : age >= ownerlessAge
      guard abandoned, (try? FileManager.default.removeItem(atPath: path)) != nil else {
        continue
      }
      removed.append(name)
    }
    return removed
  }

  /// Whether `name` is one a scratch folder is given: ``namePrefix``, optionally a ``Kind``
  /// and a dash, then a UUID.
  package static func isScratchName(_ name: String) -> Bool {
    guard name.count > 36, UUID(uuidString: String(name.suffix(36))) != nil else { return false }
    let head = name.dropLast(36)
    return head == namePrefix || Kind.allCases.contains { head == "\(namePrefix)\($0.rawValue)-" }
  }
}
