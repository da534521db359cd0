import Foundation
import TestSupport
import Testing

/// A plain zstd archive, read as `docs/FORMAT.md` (section 1) says, by Python's `tarfile`,
/// `plistlib` and the `zstd` command: every member its own frame, or frames, where the index
/// says, each large column's values a frame of its own, the trailer naming the index's frame,
/// the whole an ordinary `.tar.zst`.
@Suite(
  "Framed archives",
  .enabled(
    if: Subprocess.isInstalled("python3") && Subprocess.isInstalled("zstd"),
    "needs python3 and zstd"))
struct FramedArchiveTests {
  static let reader = """
    import hashlib, io, plistlib, struct, subprocess, sys, tarfile
    path = sys.argv[1]
    data = open(path, 'rb').read()
    magic, size, tag, version, offset, length = struct.unpack('<II4sIQQ', data[-32:])
    assert (magic, size, tag, version) == (0x184D2A5E, 24, b'GVIX', 1), 'no trailer'
    def member(start, count):
        out = subprocess.run(['zstd', '-dc'], input=data[start:start + count],
                             capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(out)) as archive:
            names = archive.getnames()
            assert len(names) == 1, names
            return names[0], archive.extractfile(names[0]).read()
    name, content = member(offset, length)
    assert name == 'index.plist', name
    index = plistlib.loads(content)
    def varints(raw):
        value, shift = 0, 0
        for byte in raw:
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                yield value
                value, shift = 0, 0
    position = 0
    framed = 0
    for entry in index['members']:
        assert entry['offset'] == position, (entry['path'], entry['offset'], position)
        name, content = member(entry['offset'], entry['length'])
        assert name == entry['path'], (name, entry['path'])
        assert len(content) == entry['size'] and hashlib.sha256(content).hexdigest() == entry['sha256']
        position += entry['length']
        if 'frames' not in entry:
            continue
        # A chunk in several frames: each one a whole zstd frame (checked by its checksum),
        # together its tar records, and each column's frame exactly that column's values.
        framed += 1
        numbers = list(varints(entry['frames']))
        frames = list(zip(numbers[0::2], numbers[1::2]))
        assert sum(length for length, _ in frames) == entry['length']
        start, pieces = entry['offset'], []
        for length, size in frames:
            out = subprocess.run(['zstd', '-dc'], input=data[start:start + length],
                                 capture_output=True, check=True).stdout
            assert len(out) == size, (entry['path'], len(out), size)
            pieces.append(out)
            start += length
        records = b''.join(pieces)
        begin = len(records) - (entry['size'] + 511) // 512 * 512
        assert records[begin:begin + entry['size']] == content
        chunk = plistlib.loads(content)
        assert entry['columns'], entry['path']
        for key, number in entry['columns']:
            values = [column['values'] for column in chunk['columns'] if column['key'] == key]
            assert pieces[number] in values, (entry['path'], key)
    assert position == offset, 'the index frame follows the last member'
    subprocess.run(['zstd', '-tq', path], check=True)
    print(len(index['members']), framed)
    """

  @Test func everyMemberIsAZstdFrameOfItsOwnWhereTheIndexSays() throws {
    let workspace = try TemporaryDirectory()
    let store = workspace.path("Library.sqlite").path
    let archive = workspace.path("Library.gvault").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "3000", "-q"]).status == 0)
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let result = try Subprocess.python(Self.reader, [archive])
    #expect(result.status == 0, "\(result.stderr)")
    let counts = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    #expect(counts.count == 2 && counts[0] > 6, "\(result.stdout)")
    // The covers of each chunk of books, at least, are a frame of their own.
    #expect(counts.count == 2 && counts[1] >= 2, "\(result.stdout)")
    // And bsdtar, which knows nothing of frames, lists it.
    let listed = try Subprocess.run("bsdtar", ["-tf", archive])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout.hasSuffix("index.plist\n"))
  }

  /// Rewrites a framed archive's index (a member's offset moved by one; the first page chunk's
  /// range of books moved past every book, or the first book chunk's first key moved by one) or
  /// its trailer (the index's offset moved by one), keeping everything else.
  static let damager = """
    import io, plistlib, struct, subprocess, sys, tarfile
    path, what = sys.argv[1], sys.argv[2]
    data = open(path, 'rb').read()
    magic, size, tag, version, offset, length = struct.unpack('<II4sIQQ', data[-32:])
    if what == 'trailer':
        data = data[:-32] + struct.pack('<II4sIQQ', magic, size, tag, version, offset + 1, length)
    else:
        out = subprocess.run(['zstd', '-dc'], input=data[offset:offset + length],
                             capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(out)) as archive:
            info = archive.getmembers()[0]
            index = plistlib.loads(archive.extractfile(info).read())
        if what == 'index':
            index['members'][2]['offset'] += 1
        elif what == 'links':
            page = next(m for m in index['members'] if m['path'].startswith('objects/Page/'))
            page['ranges']['links']['book'] = [1 << 40, 1 << 40]
        elif what == 'values':
            # Titles said to lie where no search for 'Book 1' would look.
            book = next(m for m in index['members'] if m['path'].startswith('objects/Book/'))
            book['ranges']['values']['title'] = [b'Z', b'Zz']
        else:
            book = next(m for m in index['members'] if m['path'].startswith('objects/Book/'))
            book['ranges']['keys'][0] += 1
        content = plistlib.dumps(index, fmt=plistlib.FMT_BINARY)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode='w', format=tarfile.PAX_FORMAT) as archive:
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
        tar = buffer.getvalue()[:512 + (len(content) + 511) // 512 * 512]
        frame = subprocess.run(['zstd', '-c', '-q'], input=tar, capture_output=True,
                               check=True).stdout
        rest = data[offset + length:-32]
        data = (data[:offset] + frame + rest
                + struct.pack('<II4sIQQ', magic, size, tag, version, offset, len(frame)))
    open(path, 'wb').write(data)
    """

  @Test func verifyAndRestoreRefuseAFramedArchiveWhoseIndexOrTrailerMisplacesAFrame() throws {
    let workspace = try TemporaryDirectory()
    let store = workspace.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "300", "-q"]).status == 0)
    for (what, message) in [
      ("index", "does not follow the member before it"), ("trailer", "the trailer does not say"),
    ] {
      let archive = workspace.path("\(what).gvault").path
      #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
      #expect(try BuiltTool.run(["verify", archive]).status == 0)
      let damaged = try Subprocess.python(Self.damager, [archive, what])
      #expect(damaged.status == 0, "\(damaged.stderr)")
      let verify = try BuiltTool.run(["verify", archive])
      #expect(verify.status == 65, "\(what): \(verify.stdout)\(verify.stderr)")
      #expect(verify.stderr.contains(message), "\(what): \(verify.stderr)")
      // Restore holds the archive to the same: what verify accepts, find can read by parts.
      let restored = workspace.path("\(what).sqlite").path
      let restore = try BuiltTool.run(["restore", archive, "--to", restored])
      #expect(restore.status == 65, "\(what): \(restore.stderr)")
      #expect(!FileManager.default.fileExists(atPath: restored))
    }
  }

  @Test func everyChunkOfObjectsHasTheRangesOfItsKeysAndValuesInTheIndex() throws {
    let workspace = try TemporaryDirectory()
    let store = workspace.path("Library.sqlite").path
    let archive = workspace.path("Library.gvault").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "3000", "-q"]).status == 0)
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    // Python works the ranges out from the store itself, in SQL.
    let script = """
      import plistlib, sqlite3, subprocess, sys
      index = plistlib.loads(subprocess.run(['bsdtar', '-xOf', sys.argv[1], 'index.plist'],
                                            capture_output=True, check=True).stdout)
      db = sqlite3.connect(sys.argv[2])
      ent = dict(db.execute('SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY'))
      tables = {'Book': 'ZBOOK', 'GraphicNovel': 'ZBOOK', 'Page': 'ZPAGE'}
      checked = 0
      for m in index['members']:
          parts = m['path'].split('/')
          if parts[0] != 'objects' or parts[1] not in tables:
              continue
          low, high = m['ranges']['keys']
          where = f"Z_ENT = {ent[parts[1]]} AND Z_PK BETWEEN {low} AND {high}"
          table = tables[parts[1]]
          column = 'ZAUTHOR' if table == 'ZBOOK' else 'ZBOOK'
          name = 'author' if table == 'ZBOOK' else 'book'
          found = db.execute(f"SELECT min({column}), max({column}) FROM {table} WHERE {where}").fetchone()
          assert list(found) == m['ranges']['links'][name], (m['path'], found, m['ranges'])
          # The values' bounds: SQLite's min and max (text by BINARY collation), a text's
          # cut to 32 bytes at a character's start.
          def cut(text):
              data = text.encode()
              if len(data) <= 32:
                  return data
              end = 32
              while data[end] & 0xC0 == 0x80:
                  end -= 1
              return data[:end]
          values = m['ranges']['values']
          columns = {'title': ('ZTITLE', cut), 'sales': ('ZSALES', int),
                     'publishedAt': ('ZPUBLISHEDAT', float)} if table == 'ZBOOK' else \
                    {'number': ('ZNUMBER', int)}
          for key, (name, kind) in columns.items():
              low, high = db.execute(f"SELECT min({name}), max({name}) FROM {table} WHERE {where}").fetchone()
              expected = None if low is None else [kind(low), kind(high)]
              assert values.get(key) == expected, (m['path'], key, values.get(key), expected)
          checked += 1
      print(checked)
      """
    let result = try Subprocess.python(script, [archive, store])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 3)
  }

  @Test func aChunkWhoseRangesInTheIndexLieIsRefusedByVerifyRestoreAndAMergeThatReadsIt() throws {
    let workspace = try TemporaryDirectory()
    let store = workspace.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "3000", "-q"]).status == 0)
    for what in ["links", "keys", "values"] {
      let archive = workspace.path("\(what).gvault").path
      #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
      let damaged = try Subprocess.python(Self.damager, [archive, what])
      #expect(damaged.status == 0, "\(damaged.stderr)")
      let verify = try BuiltTool.run(["verify", archive])
      #expect(verify.status == 65, "\(what): \(verify.stdout)\(verify.stderr)")
      #expect(verify.stderr.contains("not those the index's ranges give"), "\(verify.stderr)")
      let restored = workspace.path("\(what).sqlite").path
      #expect(try BuiltTool.run(["restore", archive, "--to", restored]).status == 65)
      #expect(!FileManager.default.fileExists(atPath: restored))
    }
    // A merge reads every book chunk (it tests their titles): one whose keys are not its
    // ranges' is refused, and nothing is merged.
    let target = workspace.path("target.sqlite").path
    try FileManager.default.copyItem(atPath: store, toPath: target)
    let before = try sqlRows(target, "SELECT count(*) FROM ZBOOK")
    let merge = try BuiltTool.run([
      "merge", workspace.path("keys.gvault").path, "--into", target, "--entity", "Book",
      "--where", "title BEGINSWITH 'Book 1'", "--on-conflict", "skip",
    ])
    #expect(merge.status == 65, "\(merge.stderr)")
    #expect(merge.stderr.contains("not those the index's ranges give"), "\(merge.stderr)")
    #expect(try sqlRows(target, "SELECT count(*) FROM ZBOOK") == before)
  }

  @Test func otherCompressionsAndEncryptedArchivesAreNotFramed() throws {
    let workspace = try TemporaryDirectory()
    let store = workspace.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "300", "-q"]).status == 0)
    let password = workspace.path("password").path
    try Data("secret\n".utf8).write(to: URL(fileURLWithPath: password))
    for (name, options) in [
      ("gzip", ["--compression", "gzip"]), ("sealed", ["--password-file", password]),
    ] {
      let archive = workspace.path("\(name).gvault").path
      let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"] + options)
      #expect(backup.status == 0, "\(backup.stderr)")
      let result = try Subprocess.python(Self.reader, [archive])
      #expect(result.status != 0)
      #expect(result.stderr.contains("no trailer"), "\(result.stderr)")
    }
  }
}
