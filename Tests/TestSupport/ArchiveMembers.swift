import Foundation
import LibArchive

/// Every member of an archive, read into memory (test archives are small).
public func members(of path: String) throws -> [(path: String, bytes: [UInt8])] {
  let reader = try ArchiveReader(path: path)
  var result: [(path: String, bytes: [UInt8])] = []
  while let entry = try reader.nextEntry() { result.append((entry.path, try reader.readAll())) }
  return result
}

/// Damages the frame of the first member of the framed archive at `path` whose name starts
/// with `prefix` (`objects/Tag/`): one byte in its middle flipped, or with `atStart` one in its
/// first frame (which every read of the member reads), found through the archive's index as
/// Python's `plistlib` reads it (so the test does not trust graphvault's reader).
public func damageMember(
  startingWith prefix: String, inArchive path: String, atStart: Bool = false
) throws {
  let found = try Subprocess.python(
    """
    import plistlib, subprocess, sys, io, tarfile
    tar = subprocess.run(['zstd', '-dc', sys.argv[1]], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        index = plistlib.loads(t.extractfile('index.plist').read())
    m = next(m for m in index['members'] if m['path'].startswith(sys.argv[2]))
    print(m['offset'] + (16 if sys.argv[3] == 'start' else m['length'] // 2))
    """, [path, prefix, atStart ? "start" : "middle"])
  guard found.status == 0,
    let offset = UInt64(found.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
  else { throw ArchiveDamageError(detail: found.stderr) }
  let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
  defer { try? handle.close() }
  try handle.seek(toOffset: offset)
  guard let byte = try handle.read(upToCount: 1)?.first else {
    throw ArchiveDamageError(detail: "no byte at \(offset) of \(path)")
  }
  try handle.seek(toOffset: offset)
  try handle.write(contentsOf: Data([byte ^ 0xFF]))
}

/// Why an archive could not be damaged as asked.
public struct ArchiveDamageError: Error {
  /// What went wrong (Python's message).
  public let detail: String
}
