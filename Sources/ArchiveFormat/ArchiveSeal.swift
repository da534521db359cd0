import Crypto
import Foundation
import LibArchive
import PropertyList
import _CryptoExtras

/// The encryption of a sealed (encrypted) archive: its key, derived from a password, and the
/// sealing and opening of its members.
///
/// A sealed archive is still a tar with the same members under the same names; only their
/// content is sealed, compressed and then encrypted with AES-256-GCM. Its first member,
/// `graphvault.plist`, holds in the clear only the format, the compression and the
/// key-derivation parameters (below), with the real header sealed inside it. Each member's
/// nonce is its position (the header 0, the next member 1, …), and its additional
/// authenticated data is a digest of the parameters followed by its path: a member changed,
/// renamed, dropped, repeated or moved, or a parameter changed, fails to open.
///
/// The key: scrypt (N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s, memory-hard; the strongest
/// password hash swift-crypto offers) of the password with 32 random bytes of salt per archive
/// gives a master key; HKDF-SHA256 derives from it the member key and a password-check key,
/// whose HMAC of the salt is kept in the header so that a wrong password is told apart from a
/// damaged member.
package struct ArchiveSeal {
  /// The cipher's name in the header.
  package static let cipher = "AES-256-GCM"
  /// The key-derivation function's name in the header.
  package static let kdf = "scrypt"

  /// The key-derivation parameters, as the clear header keeps them.
  package struct Parameters: Equatable {
    package let salt: [UInt8]
    package let n: Int
    package let r: Int
    package let p: Int
    package let check: [UInt8]

    /// The clear header's `encryption` dictionary.
    var plist: PropertyListValue {
      [
        "cipher": .string(ArchiveSeal.cipher), "kdf": .string(ArchiveSeal.kdf),
        "salt": .data(salt), "N": .integer(Int64(n)), "r": .integer(Int64(r)),
        "p": .integer(Int64(p)), "check": .data(check),
      ]
    }

    init(salt: [UInt8], n: Int, r: Int, p: Int, check: [UInt8]) {
      (self.salt, self.n, self.r, self.p, self.check) = (salt, n, r, p, check)
    }

    /// Reads the dictionary, refusing ciphers and parameters this version does not use (a
    /// tampered N must not make the reader allocate gigabytes).
    init(reading plist: PropertyListValue) throws(ArchiveFormatError) {
      func bad(_ detail: String) -> ArchiveFormatError {
        ArchiveFormatError(member: ArchiveLayout.header, detail)
      }
      guard plist["cipher"]?.stringValue == ArchiveSeal.cipher,
        plist["kdf"]?.stringValue == ArchiveSeal.kdf
      else {
        throw bad(
          "the archive is encrypted with \(plist["cipher"]?.stringValue ?? "?") and \(plist["kdf"]?.stringValue ?? "?"); this graphvault reads \(ArchiveSeal.cipher) with \(ArchiveSeal.kdf)"
        )
      }
      guard let salt = plist["salt"]?.dataValue, salt.count >= 16,
        let check = plist["check"]?.dataValue, check.count == 32,
        let n = plist["N"]?.integerValue, let r = plist["r"]?.integerValue,
        let p = plist["p"]?.integerValue,
        n >= 1024, n <= 1 << 20, n & (n - 1) == 0, (1...32).contains(r), (1...16).contains(p),
        128 * n * r * p <= 1 << 30
      else {
        throw bad("the archive's key-derivation parameters are missing or out of bounds")
      }
      self.init(salt: salt, n: Int(n), r: Int(r), p: Int(p), check: check)
    }
  }

  /// The parameters, for the clear header.
  package let parameters: Parameters
  /// How each member's content is compressed before it is sealed.
  package let compression: Compression
  private let key: SymmetricKey
  /// Bound into every member: the parameters and the compression.
  private let context: [UInt8]

  /// A new seal for a new archive: a fresh random salt, the key derived from `password`.
  package static func create(password: [UInt8], compression: Compression) throws -> ArchiveSeal {
    var salt = [UInt8](repeating: 0, count: 32)
    var generator = SystemRandomNumberGenerator()
    for index in salt.indices { salt[index] = generator.next() }
    let (key, check) = try derive(password: password, salt: salt, n: 1 << 15, r: 8, p: 1)
    return ArchiveSeal(
      parameters: Parameters(salt: salt, n: 1 << 15, r: 8, p: 1, check: check),
      compression: compression, key: key)
  }

  /// The seal of an existing archive, from its clear header's parameters.
  /// - Throws: ``ArchiveFormatError`` (``ArchiveFormatError/Kind/wrongPassword`` when the
  ///   password check fails).
  package static func open(
    password: [UInt8], parameters: Parameters, compression: Compression
  ) throws(ArchiveFormatError) -> ArchiveSeal {
    let derived: (SymmetricKey, [UInt8])
    do {
      derived = try derive(
        password: password, salt: parameters.salt, n: parameters.n, r: parameters.r,
        p: parameters.p)
    } catch {
      throw ArchiveFormatError(member: ArchiveLayout.header, "key derivation failed: \(error)")
    }
    guard constantTimeEqual(derived.1, parameters.check) else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header,
        "wrong password: it does not open this archive (or the archive's header was changed)",
        kind: .wrongPassword)
    }
    return ArchiveSeal(parameters: parameters, compression: compression, key: derived.0)
  }

  private init(parameters: Parameters, compression: Compression, key: SymmetricKey) {
    self.parameters = parameters
    self.compression = compression
    self.key = key
    let text =
      "graphvault seal 1|\(Self.cipher)|\(Self.kdf)|\(parameters.n)|\(parameters.r)|\(parameters.p)|"
      + "\(compression.rawValue)|\(Checksum.hex(parameters.salt))|\(Checksum.hex(parameters.check))"
    context = Checksum.digest(Array(text.utf8))
  }

  private static func derive(password: [UInt8], salt: [UInt8], n: Int, r: Int, p: Int) throws
    -> (SymmetricKey, [UInt8])
  {
    let master = try KDF.Scrypt.deriveKey(
      from: password, salt: salt, outputByteCount: 32, rounds: n, blockSize: r, parallelism: p)
    let key = HKDF<SHA256>.deriveKey(
      inputKeyMaterial: master, info: Array("graphvault member key".utf8), outputByteCount: 32)
    let checkKey = HKDF<SHA256>.deriveKey(
      inputKeyMaterial: master, info: Array("graphvault password check".utf8),
      outputByteCount: 32)
    let check = Array(HMAC<SHA256>.authenticationCode(for: salt, using: checkKey))
    return (key, check)
  }

  private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
  }

  /// The clear header of an archive sealed with this seal: the format (the real header's), how each member's bytes
  /// are compressed before sealing, the key-derivation parameters, and the real header,
  /// sealed (`sealedHeader`, from ``seal(_:path:position:)`` at position 0). Nothing else.
  package func clearHeader(sealedHeader: [UInt8], formatVersion: Int64) -> PropertyListValue {
    [
      "format": .integer(formatVersion),
      "compression": .string(compression.rawValue),
      "encryption": parameters.plist,
      "header": .data(sealedHeader),
    ]
  }

  /// The seal and the real header of a sealed archive whose first member holds `clearHeader`;
  /// nil when it is no clear header (a plain archive's header). `password` is asked for only
  /// when it is one.
  /// - Throws: ``ArchiveFormatError``: no password (``ArchiveFormatError/Kind/passwordRequired``),
  ///   a wrong one (``ArchiveFormatError/Kind/wrongPassword``), parameters or a compression
  ///   this version does not read, a sealed header that does not open; or what `password` throws.
  package static func opening(
    clearHeader: PropertyListValue, password: () throws -> [UInt8]?, limit: Int
  ) throws -> (seal: ArchiveSeal, header: [UInt8])? {
    guard let encryption = clearHeader["encryption"] else { return nil }
    let parameters = try Parameters(reading: encryption)
    guard
      let compression = clearHeader["compression"]?.stringValue.flatMap(Compression.init)
    else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header,
        "the encrypted archive names no compression this graphvault knows")
    }
    guard let password = try password() else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header,
        "the archive is encrypted: give its password with --password-file, GRAPHVAULT_PASSWORD_FILE or GRAPHVAULT_PASSWORD_COMMAND",
        kind: .passwordRequired)
    }
    let seal = try open(password: password, parameters: parameters, compression: compression)
    guard let sealed = clearHeader["header"]?.dataValue else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header, "the encrypted archive's header holds no sealed header")
    }
    return (seal, try seal.open(sealed, path: ArchiveLayout.header, position: 0, limit: limit))
  }

  /// Seals `content`, the member `path` at `position` (0 for the real header).
  package func seal(_ content: [UInt8], path: String, position: UInt64) throws -> [UInt8] {
    let plain = try FilterCodec.compress(content, filter: compression.filter)
    let box = try AES.GCM.seal(
      plain, using: key, nonce: Self.nonce(position), authenticating: context + Array(path.utf8))
    return Array(box.ciphertext) + Array(box.tag)
  }

  /// Opens the member `path` at `position`.
  /// - Throws: ``ArchiveFormatError`` when it was changed, renamed, moved or damaged.
  package func open(_ sealed: [UInt8], path: String, position: UInt64, limit: Int)
    throws(ArchiveFormatError) -> [UInt8]
  {
    let plain: [UInt8]
    do {
      guard sealed.count >= 16 else { throw CryptoKitError.authenticationFailure }
      let box = try AES.GCM.SealedBox(
        nonce: Self.nonce(position), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
      plain = Array(
        try AES.GCM.open(box, using: key, authenticating: context + Array(path.utf8)))
    } catch {
      throw ArchiveFormatError(
        member: path,
        "authentication failed: the member was changed, damaged, renamed, moved or replaced (member \(position) of the archive); nothing of it is used"
      )
    }
    do {
      return try FilterCodec.decompress(plain, filter: compression.filter, limit: limit)
    } catch {
      throw ArchiveFormatError(member: path, "cannot decompress the opened member: \(error)")
    }
  }

  private static func nonce(_ position: UInt64) -> AES.GCM.Nonce {
    var bytes = [UInt8](repeating: 0, count: 12)
    for index in 0..<8 {
      bytes[4 + index] = UInt8(truncatingIfNeeded: position >> (56 - 8 * index))
    }
    // Twelve bytes is always a valid GCM nonce.
    return try! AES.GCM.Nonce(data: bytes)
  }
}
